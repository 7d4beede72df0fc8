#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// One pass over a `--jsonl` file that `--resume` continues: every record's URL goes into a
/// `RecordedURLs`, and the file's end is judged, since a run that was killed (SIGKILL, a power
/// cut, a full disk) may have left the start of a record there.
///
/// The file is read in chunks with `pread`: memory is the set of keys plus one line, however
/// long the file, and a line longer than `longestLine` is not kept at all (no record is that
/// long; it is judged not a record).
struct RecordFileScan {
    /// How the file ends.
    enum Tail: Equatable {
        /// With a whole record and its newline (or empty): append as it is.
        case whole
        /// With a whole record but no newline: one is to be added before appending.
        case missingNewline
        /// With the start of a record that was being written, from byte `offset` on (`length`
        /// bytes, on `line`): not a record, to be cut off.
        case torn(line: Int, offset: Int64, length: Int64)
    }

    /// The file is not one `--resume` may continue: `line` (from 1) is not a record, and is
    /// not the torn end of one either.
    struct NotARecord: Error, Equatable {
        var line: Int
        var reason: String
    }

    /// The longest line taken for a record: far beyond any URL a server accepts (8 KiB is
    /// usual), and a bound on what a file without newlines makes the scan hold.
    static let longestLine = 16 << 20

    /// What every record has, and all `--resume` reads of it: a line that decodes to this is a
    /// record.
    private struct RecordedLine: Decodable {
        var url: String
        var urlBase64: String?
        var requestURL: String
        var attempts: Int
    }

    /// How every record line starts (`FetchRecord` is written with sorted keys): a torn line
    /// starts with as much of it as was written.
    private static let recordStart = Array(#"{"attempts":"#.utf8)

    private let decoder = JSONDecoder()

    /// Reads `descriptor` (a regular file) from its start to its end, `chunkSize` bytes at a
    /// time (smaller only in the fuzz harness, to cut lines across reads), putting each
    /// record's URL into `recorded`.
    /// - Throws: `NotARecord` for a line that is not a record, save a torn last one (`Tail`);
    ///   `POSIXError` when reading fails.
    static func scan(_ descriptor: Int32, into recorded: RecordedURLs, chunkSize: Int = 1 << 16) throws -> Tail {
        var scan = RecordFileScan()
        return try scan.run(descriptor, recorded, chunkSize: chunkSize)
    }

    /// The line being read: its bytes so far (unless too long), where it started, its number.
    private var line: [UInt8] = []
    private var lineIsTooLong = false
    private var lineStart: Int64 = 0
    private var lineNumber = 1
    /// The last line ended but was not a record: an error unless it is the file's last.
    private var unjudged: (line: Int, offset: Int64, reason: String, looksTorn: Bool)?

    private mutating func run(_ descriptor: Int32, _ recorded: RecordedURLs, chunkSize: Int) throws -> Tail {
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 1)
        defer { chunk.deallocate() }
        var offset: Int64 = 0
        while true {
            let count = pread(descriptor, chunk.baseAddress, chunk.count, off_t(offset))
            if count < 0 && errno == EINTR { continue }
            if count < 0 { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            if count == 0 { break }
            let bytes = UnsafeRawBufferPointer(rebasing: chunk[..<count])
            var start = 0
            while start < count {
                guard let found = memchr(bytes.baseAddress! + start, 0x0A, count - start) else {
                    append(UnsafeRawBufferPointer(rebasing: bytes[start...]))
                    break
                }
                let newline = UnsafeRawPointer(found) - bytes.baseAddress!
                // A line within one chunk is judged where it lies, without a copy.
                if line.isEmpty && !lineIsTooLong {
                    try ended(UnsafeRawBufferPointer(rebasing: bytes[start..<newline]), end: offset + Int64(newline) + 1, recorded)
                } else {
                    append(UnsafeRawBufferPointer(rebasing: bytes[start..<newline]))
                    let whole = line
                    try whole.withUnsafeBytes { try ended($0, end: offset + Int64(newline) + 1, recorded) }
                }
                start = newline + 1
            }
            offset += Int64(count)
        }
        return try finish(end: offset, recorded)
    }

    /// Adds bytes of a line not ended yet. Of a line too long only its start is kept, for
    /// `looksTorn`.
    private mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard !lineIsTooLong else { return }
        line.append(contentsOf: bytes)
        if line.count > Self.longestLine {
            lineIsTooLong = true
            line = Array(line.prefix(Self.recordStart.count))
        }
    }

    /// A line ended (`end` is the offset after its newline).
    private mutating func ended(_ bytes: UnsafeRawBufferPointer, end: Int64, _ recorded: RecordedURLs) throws {
        if let earlier = unjudged { throw NotARecord(line: earlier.line, reason: earlier.reason) }
        switch lineIsTooLong ? .failure(Self.tooLong) : judge(bytes) {
        case .success(let key):
            recorded.insert(key)
        case .failure(let reason):
            unjudged = (lineNumber, lineStart, reason.text, !reason.isJSON && Self.looksTorn(bytes))
        }
        line.removeAll(keepingCapacity: true)
        lineIsTooLong = false
        lineStart = end
        lineNumber += 1
    }

    /// The file ended at `end`: how its last line stands.
    private mutating func finish(end: Int64, _ recorded: RecordedURLs) throws -> Tail {
        let unterminated = end > lineStart
        if let earlier = unjudged {
            // Only the last line can be torn, and only as a record's start is.
            guard !unterminated, earlier.looksTorn else { throw NotARecord(line: earlier.line, reason: earlier.reason) }
            return .torn(line: earlier.line, offset: earlier.offset, length: end - earlier.offset)
        }
        guard unterminated else { return .whole }
        let judged = lineIsTooLong ? .failure(Self.tooLong) : line.withUnsafeBytes { judge($0) }
        switch judged {
        case .success(let key):
            recorded.insert(key)
            return .missingNewline
        case .failure(let reason):
            guard !reason.isJSON && line.withUnsafeBytes(Self.looksTorn) else { throw NotARecord(line: lineNumber, reason: reason.text) }
            return .torn(line: lineNumber, offset: lineStart, length: end - lineStart)
        }
    }

    private struct Reason: Error {
        var text: String
        /// Whether the line is JSON all the same: then no write was cut short in it, as no
        /// start of a record is a whole JSON value.
        var isJSON = true
    }

    private static let tooLong = Reason(text: "longer than \(longestLine) bytes", isJSON: false)

    /// The key of the URL of the record on a line, or why it is none.
    private func judge(_ bytes: UnsafeRawBufferPointer) -> Result<RecordedURLKey, Reason> {
        if let key = RecordLineShape.urlKey(of: bytes) { return .success(key) }
        let record: RecordedLine
        do {
            record = try decoder.decode(RecordedLine.self, from: Data(bytes))
        } catch let DecodingError.keyNotFound(key, _) {
            return .failure(Reason(text: "no \"\(key.stringValue)\""))
        } catch let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context) {
            let path = context.codingPath.map(\.stringValue).joined(separator: ".")
            return .failure(Reason(text: path.isEmpty ? "not a JSON object" : "\"\(path)\" is not what a record has"))
        } catch {
            return .failure(Reason(text: "not JSON", isJSON: false))
        }
        guard let base64 = record.urlBase64 else { return .success(RecordedURLKey(text: record.url)) }
        guard let bytes = Data(base64Encoded: base64) else { return .failure(Reason(text: "\"urlBase64\" is not base64")) }
        return .success(RecordedURLKey(bytes: Array(bytes)))
    }

    /// Whether a line that is not JSON is what a write cut short leaves: the start of a
    /// record line, or zeros (a file system that lost the data of its last block after a
    /// power cut). Anything else means the file is not a record file, which must not lose a
    /// line to a guess.
    private static func looksTorn(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let prefix = min(bytes.count, recordStart.count)
        return bytes.prefix(prefix).elementsEqual(recordStart.prefix(prefix)) || bytes.allSatisfy { $0 == 0 }
    }
}
