import Foundation
import UVNetworking

/// The lines a run has produced and not yet written: records (JSON Lines), the exchanges archived
/// with them (`--warc`) and the lines for standard output, gathered on the completion queue while
/// a batch of results is handled and written at its end (`FetchRunner` flushes from a block
/// queued behind the batch), or as soon as a pipe's worth is waiting. A write per batch instead of
/// one per URL, and still only whole lines written (`LineOutput.writeLines`).
///
/// A URL's exchanges and its record go out together or not at all: the batch's exchanges are
/// archived first, then its records written; whatever part of the records did not go out (a full
/// disk, a closed pipe), the exchanges of those URLs are taken back off the archive
/// (`WARCWriter.rollBack(to:)`), and a failed archive write takes the batch's exchanges back and
/// writes none of its records. Archive first: a URL in the archive without a record is fetched
/// again by `--resume` (archived twice, nothing lost), while a record without its exchanges would
/// be skipped and never archived.
///
/// Touched only on the runner's completion queue.
final class PendingLines: @unchecked Sendable {
    // @unchecked: confined to the completion queue, which is also why its buffers skip the
    // runtime's exclusivity checks (two per URL otherwise).

    /// Where records go, if anywhere.
    private let records: LineOutput?
    /// Where exchanges go, if anywhere.
    private let archive: WARCWriter?
    /// Told of each URL's record once its exchanges are archived (`FetchRunner.Settings.onRecord`).
    private let onRecord: (@Sendable (FetchRecord) -> Void)?
    private let encoder = RecordEncoder()
    /// The records' lines, encoded straight into this buffer, which keeps its capacity from one
    /// flush to the next: no allocation per line.
    @exclusivity(unchecked) private var recordBytes: [UInt8] = []
    /// Per URL with a record or exchanges: where its line ends in `recordBytes` (where the one
    /// before ended, when it has none), its exchanges, and its record for `onRecord`.
    @exclusivity(unchecked) private var urls: [(lineEnd: Int, exchanges: [WireExchange], record: FetchRecord?,
                                                final: WARCWriter.FinalResponse?)] = []
    @exclusivity(unchecked) private var standardBytes: [UInt8] = []
    /// A flush is queued behind the batch being handled.
    @exclusivity(unchecked) var flushQueued = false

    /// Bytes waiting before a flush happens at once: what a pipe takes in one write.
    static let threshold = Int(PIPE_BUF)

    /// With `archive`, `onRecord` hears of a URL's record only once its exchanges are in the
    /// archive (a worker records the URL as done then: a URL recorded done but not archived
    /// would never be archived); `addURL` leaves the call to the caller otherwise.
    init(records: LineOutput?, archive: WARCWriter? = nil, onRecord: (@Sendable (FetchRecord) -> Void)? = nil) {
        self.records = records
        self.archive = archive
        self.onRecord = onRecord
    }

    /// Whether `addURL` takes the call to `onRecord` (made once the URL's exchanges are out).
    var deliversRecords: Bool { archive != nil && onRecord != nil }

    /// Whether nothing waits.
    var isEmpty: Bool { recordBytes.isEmpty && standardBytes.isEmpty && urls.isEmpty }

    /// Whether a pipe's worth waits: flush now.
    var isFull: Bool { recordBytes.count >= Self.threshold || standardBytes.count >= Self.threshold }

    /// Adds a URL's record, if it has one: its line when there is somewhere to write records
    /// (none for a record JSON cannot carry, a non-finite timing) and the record itself for
    /// `onRecord`; and the exchanges to archive with it (kept only when there is an archive).
    /// `final` names the capture of the URL's final response as its record does.
    func addURL(_ record: FetchRecord?, exchanges: [WireExchange], final: WARCWriter.FinalResponse? = nil) {
        if let record, records != nil, encoder.append(record, to: &recordBytes) { recordBytes.append(UInt8(ascii: "\n")) }
        if archive != nil { urls.append((recordBytes.count, exchanges, deliversRecords ? record : nil, final)) }
    }

    /// Adds a line for standard output (ending with a newline).
    func addStandard(_ line: String) {
        var line = line
        line.withUTF8 { standardBytes.append(contentsOf: $0) }
    }

    /// Writes what waits: the exchanges, the records, then the lines for standard output;
    /// `beforeStandard` runs just before lines go to standard output (the progress line is
    /// cleared there). What waits is gone afterwards, written or not.
    /// - Throws: `WriteFailure` of the first write that failed; lines after it are dropped, and
    ///   the exchanges of URLs whose records were not written taken back.
    func flush(beforeStandard: () -> Void) throws(WriteFailure) {
        defer {
            recordBytes.removeAll(keepingCapacity: true)
            urls.removeAll(keepingCapacity: true)
            standardBytes.removeAll(keepingCapacity: true)
        }
        try writeArchiveAndRecords()
        if !standardBytes.isEmpty {
            beforeStandard()
            try LineOutput.standardOutput.writeLines(standardBytes)
        }
    }

    private func writeArchiveAndRecords() throws(WriteFailure) {
        guard let archive, !urls.isEmpty else {
            if let records, !recordBytes.isEmpty { try records.writeLines(recordBytes) }
            return
        }
        let start = archive.mark()
        // Where the archive stands after each URL's exchanges.
        var marks: [WARCWriter.Mark] = []
        marks.reserveCapacity(urls.count)
        do {
            for url in urls {
                try archive.write(url.exchanges, final: url.final)
                marks.append(archive.mark())
            }
        } catch {
            archive.rollBack(to: start)
            throw error
        }
        guard let records, !recordBytes.isEmpty else {
            archive.commit(marks[marks.count - 1])
            deliver(upTo: urls.count)
            return
        }
        // The mark of the last URL whose line lies within the first `written` bytes.
        var next = 0
        var covered = start
        func advance(to written: Int) {
            while next < urls.count && urls[next].lineEnd <= written {
                covered = marks[next]
                next += 1
            }
        }
        do {
            try records.writeLines(recordBytes) { written in
                advance(to: written)
                archive.commit(covered)
            }
        } catch {
            archive.rollBack(to: covered)
            deliver(upTo: next)
            throw error
        }
        deliver(upTo: urls.count)
    }

    /// Tells `onRecord` of the first `count` URLs' records.
    private func deliver(upTo count: Int) {
        guard let onRecord else { return }
        for url in urls.prefix(count) { if let record = url.record { onRecord(record) } }
    }

    /// Drops what waits (after a failed write: the run is stopping).
    func drop() {
        recordBytes.removeAll()
        urls.removeAll()
        standardBytes.removeAll()
    }
}
