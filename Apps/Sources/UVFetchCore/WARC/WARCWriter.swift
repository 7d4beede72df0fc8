#if canImport(Glibc)
import Glibc
#endif
import Foundation
import UVNetworking

/// Writes exchanges (`WireExchange`) to WARC/1.1 files, `.warc.gz` style: every record its own
/// gzip member, every run's part of a file starting with its `warcinfo` record. With a maximum
/// size the files rotate (`WARCFileNaming`) between exchanges, so a file holds whole
/// request/response pairs; an exchange larger than the maximum gets a file of its own.
///
/// Nothing is ever truncated but what this writer itself wrote and takes back: a new run refuses
/// a file an earlier run filled (`Opening.new`), and a run that continues (`Opening.append`:
/// `--resume`, `--warc-append`, a worker started again) appends after the last whole record,
/// rotating on from the highest numbered file there is.
///
/// Writes are undone together with the records of the same URLs (`mark`, `rollBack(to:)`):
/// the run writes a batch's exchanges, then its `--jsonl` lines, and takes the exchanges of the
/// URLs whose lines did not go out back off the file, so the archive and the records hold the
/// same URLs. `commit(_:)` says how far the records are out, for a process that has to exit
/// without the completion queue (`abandonUncommitted()`).
///
/// Used from the run's serial completion queue only (`abandonUncommitted` excepted), never on
/// the library's loop thread. Each exchange's records go out in one write, and a failed write is
/// cut back (`LineOutput`), so what was written before stays whole.
public final class WARCWriter: @unchecked Sendable {
    // @unchecked: the state below is touched under `lock`, from the completion queue, and from
    // the thread of a forced exit.

    /// How the run treats an archive that is already there.
    public enum Opening: Sendable {
        /// A new archive: an existing non-empty file (or numbered file of the series) is refused
        /// (`FetchInputError.archiveExists`), never replaced.
        case new
        /// Continue the archive: append to FILE (or to the highest numbered file), after its last
        /// whole record, with this run's warcinfo record first.
        case append
    }

    /// Where the archive stands: which file, how long, and what its records refer to.
    public struct Mark: Sendable, Equatable {
        fileprivate var serial: Int
        fileprivate var size: Int64
        fileprivate var hasExchanges: Bool
        fileprivate var warcinfoID: String?
        /// Payloads archived so far (`archivedPayloads`): a roll back forgets the later ones.
        fileprivate var payloadCount = 0
        /// The size of the current file's CDXJ index (`--cdxj`).
        fileprivate var indexSize: Int64 = 0
    }

    /// The most bytes kept of one request and of one response (the rest is left out and the
    /// record marked `WARC-Truncated: length`): what the run's captures are made with. 32 MiB
    /// unless given: a run holds at most this much twice per request in flight.
    public let captureLimit: Int
    /// How the files are named.
    public let naming: WARCFileNaming
    /// What opening the archive repaired (a torn last record cut off), for standard error; nil
    /// when nothing was.
    public let notice: String?
    /// `--warc-dedup`: a response whose payload this run already archived (or, with a
    /// `PayloadIndex`, was archived elsewhere) is written as a `revisit` record referring to the
    /// first one.
    public let deduplicates: Bool
    /// With `deduplicates`: the first response record of each payload digest this run wrote,
    /// and the digests in the order they came (a roll back forgets the ones after its mark).
    private var archivedPayloads: [String: WARCExchangeRecords.Original] = [:]
    /// With `deduplicates`: the payloads archived elsewhere (a fleet's other workers), asked
    /// when this run has not archived one, and told of this run's originals once committed.
    private let sharedPayloads: (any PayloadIndex)?
    /// How many of `payloadOrder` `sharedPayloads` was told of.
    private var sharedCount = 0
    /// `--cdxj`: each WARC file gets its index beside it (`CDXJIndexFile`).
    public let indexes: Bool
    /// The current file's index, with `indexes`.
    private var index: CDXJIndexFile?
    private var payloadOrder: [String] = []
    private let maximumFileSize: Int64?
    private let infoFields: [(name: String, value: String)]
    private let compressor = GzipMember()
    private let lock = NSLock()
    /// The serial this run started in: `fileNames` lists from there.
    private let firstSerial: Int
    private var output: LineOutput
    private var state: Mark
    /// How far the records that go with the archive are out (`commit`).
    private var committed: Mark

    /// The default `captureLimit`.
    public static let defaultCaptureLimit = 32 << 20

    /// Opens the archive as `opening` says and writes this run's warcinfo record, whose fields
    /// end with `info` (the run's options that matter). With `deduplicates`, `sharedPayloads`
    /// (a fleet's) counts as archived too, and hears of this run's originals.
    /// - Throws: `FetchInputError.cannotCreate` when the file cannot be opened or is standard
    ///   output (which carries the lines); `.archiveExists` for `.new` over an earlier archive;
    ///   `.cannotAppend` when the file is in use by another run or is not a WARC file to add to;
    ///   `WriteFailure` when the warcinfo record cannot be written (a full disk, /dev/full).
    public init(path: String, maximumFileSize: Int64? = nil, info: [(name: String, value: String)] = [],
                captureLimit: Int = WARCWriter.defaultCaptureLimit, opening: Opening = .new, deduplicates: Bool = false,
                indexes: Bool = false, sharedPayloads: (any PayloadIndex)? = nil) throws {
        self.deduplicates = deduplicates
        self.sharedPayloads = deduplicates ? sharedPayloads : nil
        self.indexes = indexes
        naming = WARCFileNaming(path: path, isNumbered: maximumFileSize != nil)
        self.maximumFileSize = maximumFileSize
        self.infoFields = info
        self.captureLimit = captureLimit
        if path == "-" || LineOutput.isStandardOutput(naming.name(serial: 0)) {
            throw FetchInputError.cannotCreate(path: path, reason: "a WARC file cannot be standard output")
        }
        let existing = naming.isNumbered ? naming.existingSerials() : []
        if opening == .new {
            let earlier = naming.isNumbered ? existing.map(naming.name(serial:)) : [path]
            if let filled = earlier.first(where: Self.isNonEmptyRegularFile) { throw FetchInputError.archiveExists(path: filled) }
        }
        var serial = existing.last ?? 0
        var opened = try WARCFile.open(naming.name(serial: serial), continuing: opening == .append)
        let repaired = opened.notice
        if let maximumFileSize, opened.size > 0, opened.size >= maximumFileSize {
            // Full already: the run starts the next file rather than adding its warcinfo there.
            serial += 1
            opened = try WARCFile.open(naming.name(serial: serial), continuing: true)
        }
        notice = repaired ?? opened.notice
        output = opened.output
        firstSerial = serial
        if indexes { index = try CDXJIndexFile(forWARC: naming.name(serial: serial), warcSize: opened.size) }
        state = Mark(serial: serial, size: opened.size, hasExchanges: opened.size > 0, warcinfoID: nil, indexSize: index?.size ?? 0)
        committed = state
        try startFile(named: naming.name(serial: serial))
        committed = state
    }

    private static func isNonEmptyRegularFile(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFREG && status.st_size > 0
    }

    /// The files this run has written to so far, in order.
    public var fileNames: [String] { lock.withLock { (firstSerial...state.serial).map(naming.name(serial:)) } }

    /// What a URL's record says of its final response's capture, for `write(_:final:)`.
    struct FinalResponse: Sendable {
        /// The ID its record is written with (`FetchRecord.capture`).
        var id: String
        /// For a 304 to `--since`'s validators: the capture they came from, which the record is
        /// then a server-not-modified revisit of.
        var notModifiedOf: WARCExchangeRecords.Original?
    }

    /// Writes each exchange's request and response records (none for an exchange that got no
    /// response), rotating first when the current file would pass its maximum size.
    /// - Throws: `WriteFailure`; the records written before stay whole.
    public func write(_ exchanges: [WireExchange]) throws(WriteFailure) {
        try write(exchanges, final: nil)
    }

    /// `write(_:)`, the last exchange with a response written as `final` says.
    func write(_ exchanges: [WireExchange], final: FinalResponse?) throws(WriteFailure) {
        lock.lock()
        defer { lock.unlock() }
        let finalIndex = final == nil ? nil : exchanges.lastIndex { !$0.response.isEmpty }
        for (position, exchange) in exchanges.enumerated() {
            let payloadsBefore = payloadOrder.count
            let final = position == finalIndex ? final : nil
            var (members, entries) = compressedRecords(of: exchange, final: final)
            guard !members.isEmpty else { continue }
            if let maximumFileSize, state.hasExchanges, state.size + Int64(members.count) > maximumFileSize {
                let name = naming.name(serial: state.serial + 1)
                output = try WARCFile.openNext(name)
                state.serial += 1
                state.size = 0
                if indexes {
                    index = try CDXJIndexFile(forWARC: name, warcSize: 0)
                    state.indexSize = 0
                }
                try startFile(named: name)
                // The records name their file's warcinfo: made again for the new one, the
                // payload it noted forgotten first (it would be a revisit of itself).
                forgetPayloads(after: payloadsBefore)
                (members, entries) = compressedRecords(of: exchange, final: final)
            }
            let start = state.size
            try output.write(members)
            state.size += Int64(members.count)
            state.hasExchanges = true
            if let index {
                // After the records: an index line never names a record that is not there.
                try index.write(entries.map { entry in
                    var entry = entry
                    entry.offset += start
                    return entry.line
                }.joined())
                state.indexSize = index.size
            }
        }
    }

    /// Where the archive stands now, to roll back to.
    public func mark() -> Mark { lock.withLock { state } }

    /// Takes back what was written after `mark`: the current file cut back to it, files rotated
    /// into since removed. For exchanges whose URLs' records did not go out. Best effort: the
    /// run is failing already, and a file that cannot be cut keeps whole records all the same.
    public func rollBack(to mark: Mark) {
        lock.lock()
        defer { lock.unlock() }
        cutBack(to: mark)
        if committed.serial > state.serial || (committed.serial == state.serial && committed.size > state.size) { committed = state }
    }

    /// The records that go with the archive up to `mark` are out: a forced exit keeps it, and
    /// `sharedPayloads` hears of the originals archived up to it.
    public func commit(_ mark: Mark) {
        lock.withLock {
            committed = mark
            share(upTo: mark.payloadCount)
        }
    }

    /// Tells `sharedPayloads` of the originals noted after the last it was told of, up to the
    /// first `count` (under `lock`).
    private func share(upTo count: Int) {
        guard let sharedPayloads else { return }
        let end = min(count, payloadOrder.count)
        guard end > sharedCount else { return }
        sharedPayloads.archived(payloadOrder[sharedCount..<end].map { ArchivedPayload(digest: $0, original: archivedPayloads[$0]!) })
        sharedCount = end
    }

    /// For a process about to exit without the completion queue (a stop whose queue is stuck
    /// writing to a pipe nobody reads): takes back what was written past the last `commit`, so
    /// no exchange is left whose URL has no record, and keeps the writer locked, so nothing is
    /// written after. Waits at most `seconds` for a write in progress.
    public func abandonUncommitted(waiting seconds: Double = 1) {
        guard lock.lock(before: Date(timeIntervalSinceNow: seconds)) else { return }
        // Never unlocked: the process exits.
        cutBack(to: committed)
    }

    /// Removes the files rotated into after `mark`, cuts its file back to its size and makes it
    /// the current one again (under `lock`). A file that cannot be reopened is left as it is.
    private func cutBack(to mark: Mark) {
        if state.serial != mark.serial {
            for serial in (mark.serial + 1)...state.serial {
                unlink(naming.name(serial: serial))
                if indexes { unlink(naming.name(serial: serial) + ".cdxj") }
            }
            guard let reopened = try? WARCFile.open(naming.name(serial: mark.serial), continuing: true, scanning: false) else { return }
            output = reopened.output
            if indexes { index = try? CDXJIndexFile(forWARC: naming.name(serial: mark.serial), warcSize: mark.size) }
        } else {
            index?.truncate(to: mark.indexSize)
        }
        Self.truncate(output.descriptor, to: mark.size)
        // Payloads archived after the mark are gone with their records.
        forgetPayloads(after: mark.payloadCount)
        state = mark
    }

    /// Forgets the payloads noted after the first `count` (under `lock`).
    private func forgetPayloads(after count: Int) {
        while payloadOrder.count > count { archivedPayloads.removeValue(forKey: payloadOrder.removeLast()) }
        state.payloadCount = payloadOrder.count
        // Never below a commit, which is what `sharedPayloads` is told of; the clamp only keeps
        // the count true.
        sharedCount = min(sharedCount, payloadOrder.count)
    }

    private static func truncate(_ descriptor: Int32, to size: Int64) {
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_size > size else { return }
        _ = ftruncate(descriptor, off_t(size))
    }

    /// The exchange's two records as gzip members, naming the current file's warcinfo; with
    /// `deduplicates`, a payload archived before makes the response a revisit.
    /// With `indexes`, also the index entries of the response or revisit (offsets from the
    /// start of `members`).
    private func compressedRecords(of exchange: WireExchange, final: FinalResponse?) -> (members: Data, entries: [CDXJEntry]) {
        var (records, scan) = WARCExchangeRecords.scannedRecords(for: exchange, warcinfoID: state.warcinfoID, responseID: final?.id)
        if records.count == 2, scan.status == 304, let original = final?.notModifiedOf {
            records[1] = WARCExchangeRecords.notModifiedRevisit(of: records[1], original: original)
        } else if deduplicates, records.count == 2 {
            records[1] = deduplicated(records[1], exchange: exchange, scan: scan)
        }
        var members = Data()
        var entries: [CDXJEntry] = []
        for record in records {
            let member = record.compressed(by: compressor)
            if indexes, record.type == "response" || record.type == "revisit" {
                let mime = record.type == "revisit" ? "warc/revisit" : scan.contentType.map(CDXJEntry.mime(contentType:))
                entries.append(CDXJEntry(url: exchange.url.absoluteString, date: record.date, mime: mime?.isEmpty == true ? nil : mime,
                                         status: scan.status, digest: scan.payloadDigest, length: member.count,
                                         offset: Int64(members.count), filename: (naming.name(serial: state.serial) as NSString).lastPathComponent))
            }
            members.append(member)
        }
        return (members, entries)
    }

    /// `response` as it goes in the archive: a revisit when its payload was archived before in
    /// this run (or, by `sharedPayloads`, elsewhere), else itself, noted as the original of its
    /// payload. Only whole 2xx payloads count: an empty one says nothing, and a cut one is not
    /// the payload it would have been.
    private func deduplicated(_ response: WARCRecord, exchange: WireExchange, scan: ResponsePayloadScan) -> WARCRecord {
        guard let digest = scan.payloadDigest, let status = scan.status, (200..<300).contains(status), scan.payloadLength > 0,
              let bodyStart = scan.bodyStart, exchange.isComplete, !exchange.isResponseTruncated else { return response }
        if let original = archivedPayloads[digest] ?? sharedPayloads?.original(ofPayload: digest)?.original {
            return WARCExchangeRecords.revisit(of: response, headEnd: bodyStart - scan.finalHeadStart, original: original)
        }
        archivedPayloads[digest] = .init(id: response.id, targetURI: exchange.url.absoluteString, date: WARCDate.string(response.date))
        payloadOrder.append(digest)
        state.payloadCount = payloadOrder.count
        return response
    }

    private func startFile(named name: String) throws(WriteFailure) {
        let info = WARCInfo.record(fileName: (name as NSString).lastPathComponent, fields: infoFields)
        let member = info.compressed(by: compressor)
        try output.write(member)
        state.size += Int64(member.count)
        state.warcinfoID = info.id
        if state.size == Int64(member.count) { state.hasExchanges = false }
    }
}
