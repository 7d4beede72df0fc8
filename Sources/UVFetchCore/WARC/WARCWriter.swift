import Foundation
import UVNetworking

/// Writes exchanges (`WireExchange`) to WARC/1.1 files, `.warc.gz` style: every record its own
/// gzip member, every file starting with its `warcinfo` record. With a maximum size the files
/// rotate (`WARCFileNaming`) between exchanges, so a file holds whole request/response pairs;
/// an exchange larger than the maximum gets a file of its own.
///
/// Used from the run's serial completion queue only, so it needs no lock of its own; never on
/// the library's loop thread. Each exchange's records go out in one write, and a failed write is
/// cut back (`LineOutput`), so what was written before stays whole.
public final class WARCWriter: @unchecked Sendable {
    /// The most bytes kept of one request and of one response (the rest is left out and the
    /// record marked `WARC-Truncated: length`): what the run's captures are made with. 32 MiB
    /// unless given: a run holds at most this much twice per request in flight.
    public let captureLimit: Int
    /// How the files are named.
    public let naming: WARCFileNaming
    private let maximumFileSize: Int64?
    private let infoFields: [(name: String, value: String)]
    private var output: LineOutput
    private var serial = 0
    /// Bytes in the current file, and whether it holds an exchange yet.
    private var fileSize: Int64 = 0
    private var fileHasExchanges = false
    private var warcinfoID: String?
    private let compressor = GzipMember()

    /// The default `captureLimit`.
    public static let defaultCaptureLimit = 32 << 20

    /// Opens the first file (FILE, or its first numbered name with `maximumFileSize`) and writes
    /// its warcinfo record, whose fields end with `info` (the run's options that matter).
    /// - Throws: `FetchInputError.cannotCreate` when the file cannot be opened or is standard
    ///   output (which carries the lines); `WriteFailure` when the warcinfo record cannot be
    ///   written (a full disk, /dev/full).
    public init(path: String, maximumFileSize: Int64? = nil, info: [(name: String, value: String)] = [],
                captureLimit: Int = WARCWriter.defaultCaptureLimit) throws {
        naming = WARCFileNaming(path: path, isNumbered: maximumFileSize != nil)
        self.maximumFileSize = maximumFileSize
        self.infoFields = info
        self.captureLimit = captureLimit
        let first = naming.name(serial: 0)
        output = try LineOutput.open(path: first)
        if output.isStandardOutput {
            throw FetchInputError.cannotCreate(path: first, reason: "a WARC file cannot be standard output")
        }
        try startFile(named: first)
    }

    /// The files written so far, in order.
    public var fileNames: [String] { (0...serial).map(naming.name(serial:)) }

    /// Writes each exchange's request and response records (none for an exchange that got no
    /// response), rotating first when the current file would pass its maximum size.
    /// - Throws: `WriteFailure`; the records written before stay whole.
    public func write(_ exchanges: [WireExchange]) throws(WriteFailure) {
        for exchange in exchanges {
            let records = WARCExchangeRecords.records(for: exchange, warcinfoID: warcinfoID)
            guard !records.isEmpty else { continue }
            var members = Data()
            for record in records { members.append(record.compressed(by: compressor)) }
            if let maximumFileSize, fileHasExchanges, fileSize + Int64(members.count) > maximumFileSize {
                serial += 1
                let name = naming.name(serial: serial)
                output = try LineOutput.create(path: name)
                try startFile(named: name)
            }
            try output.write(members)
            fileSize += Int64(members.count)
            fileHasExchanges = true
        }
    }

    private func startFile(named name: String) throws(WriteFailure) {
        let info = WARCInfo.record(fileName: (name as NSString).lastPathComponent, fields: infoFields)
        let member = info.compressed(by: compressor)
        fileSize = 0
        fileHasExchanges = false
        try output.write(member)
        fileSize = Int64(member.count)
        warcinfoID = info.id
    }
}
