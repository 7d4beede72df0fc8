#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// What `--since FILE.jsonl` sends again: per URL, the ETag and Last-Modified of its last
/// record that had a response, so the run asks with If-None-Match / If-Modified-Since and a
/// server whose copy has not changed answers 304 without the body (curl's --etag-compare,
/// wget's -N, an incremental crawl).
///
/// A URL is its input bytes, as for `--resume` (`RecordedURLKey`): the record's `url`, or its
/// `urlBase64` decoded. The file is read a line at a time and only URLs with validators are
/// kept, so memory grows with them, not with the file. A later record of a URL replaces an
/// earlier one, when it had a response: a record without one says nothing of the resource.
public final class RecordedValidators: ValidatorLookup {
    /// The validators of one URL, verbatim as its record kept them (quotes and `W/` kept).
    public struct Validators: Sendable, Equatable {
        /// Sent as If-None-Match.
        public var etag: String?
        /// Sent as If-Modified-Since.
        public var lastModified: String?
        /// Where the earlier run archived the response (`FetchRecord.capture`) and its URL (the
        /// record's effectiveURL): what a 304's revisit record refers to.
        public var capture: FetchRecord.Capture?
        public var capturedURL: String?

        /// Creates validators; at least one should be set.
        public init(etag: String?, lastModified: String?, capture: FetchRecord.Capture? = nil, capturedURL: String? = nil) {
            self.etag = etag
            self.lastModified = lastModified
            self.capture = capture
            self.capturedURL = capturedURL
        }
    }

    private let table: [RecordedURLKey: Validators]
    /// Lines of the file that were not records (skipped; the run says how many).
    public let skippedLines: Int

    /// URLs with validators.
    public var count: Int { table.count }

    /// Reads the records of `path` (`-` is not accepted: the file is read before the input,
    /// which may be standard input).
    /// - Throws: `FetchInputError.unreadable` when it cannot be opened or is not a regular file.
    public init(path: String) throws(FetchInputError) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .unreadable(path: path, reason: String(cString: strerror(errno))) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            close(descriptor)
            throw .unreadable(path: path, reason: "--since needs the --jsonl file of an earlier run, a regular file")
        }
        guard let reader = LineReader(descriptor: descriptor) else {
            throw .unreadable(path: path, reason: String(cString: strerror(errno)))
        }
        var table: [RecordedURLKey: Validators] = [:]
        var skipped = 0
        let decoder = JSONDecoder()
        while let line = reader.nextLine() {
            switch Self.read(line, decoder: decoder) {
            case .validators(let key, let validators): table[key] = validators
            case .withoutValidators(let key): table[key] = nil
            case .noResponse: break
            case .notARecord: if !line.isEmpty { skipped += 1 }
            }
        }
        self.table = table
        skippedLines = skipped
    }

    /// Validators given directly (tests, or a caller that keeps them elsewhere), by the URL
    /// text each record would carry.
    public init(_ validators: [String: Validators]) {
        var table: [RecordedURLKey: Validators] = [:]
        for (url, entry) in validators { table[RecordedURLKey(text: url)] = entry }
        self.table = table
        skippedLines = 0
    }

    /// The validators for an input entry (`URLInput.Entry.url`'s `text` and `bytes`), if its
    /// last record had any.
    public func validators(text: String, bytes: [UInt8]?) -> Validators? {
        table[bytes.map(RecordedURLKey.init(bytes:)) ?? RecordedURLKey(text: text)]
    }

    /// What a line says of its URL.
    private enum LineReading {
        /// A response with validators: the ones to send.
        case validators(RecordedURLKey, Validators)
        /// A response without them: what an earlier record said no longer holds.
        case withoutValidators(RecordedURLKey)
        /// No response (a transport error, robots): it says nothing of the resource.
        case noResponse
        case notARecord
    }

    /// The fields of a record this reads.
    private struct RecordedLine: Decodable {
        var url: String
        var urlBase64: String?
        var status: Int?
        var etag: String?
        var lastModified: String?
        var effectiveURL: String?
        var capture: FetchRecord.Capture?
    }

    private static func read(_ line: String, decoder: JSONDecoder) -> LineReading {
        guard let record = try? decoder.decode(RecordedLine.self, from: Data(line.utf8)) else { return .notARecord }
        let key: RecordedURLKey
        if let base64 = record.urlBase64 {
            guard let bytes = Data(base64Encoded: base64) else { return .notARecord }
            key = RecordedURLKey(bytes: Array(bytes))
        } else {
            key = RecordedURLKey(text: record.url)
        }
        guard record.status != nil else { return .noResponse }
        guard record.etag != nil || record.lastModified != nil else { return .withoutValidators(key) }
        return .validators(key, Validators(etag: record.etag, lastModified: record.lastModified, capture: record.capture,
                                           capturedURL: record.effectiveURL))
    }
}
