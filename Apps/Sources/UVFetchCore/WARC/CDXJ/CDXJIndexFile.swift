#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// The CDXJ index beside one WARC file (`--cdxj`): the WARC file's name plus `.cdxj`, a line
/// per response and revisit record (`CDXJEntry`), in the order the records are in the file, as
/// cdxj-indexer writes one without `--sort` (`LC_ALL=C sort` gives the order pywb looks up in).
///
/// It follows its WARC file: lines are appended after their records are written, cut back with
/// them (`truncate`), and when an archive is continued the lines of records that are no longer
/// there (a torn record cut off) are dropped, so the index never points past the file.
final class CDXJIndexFile {
    let path: String
    private let descriptor: Int32
    /// Bytes in the file.
    private(set) var size: Int64

    /// Opens (or creates) the index of the WARC file `warcPath`, which is `warcSize` bytes long:
    /// lines of an earlier run at offsets from `warcSize` on are dropped.
    init(forWARC warcPath: String, warcSize: Int64) throws(WriteFailure) {
        path = warcPath + ".cdxj"
        let kept = Self.linesBefore(warcSize, in: path)
        descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw WriteFailure(name: path, errorNumber: errno) }
        size = 0
        do {
            try write(kept)
        } catch {
            close(descriptor)
            throw error
        }
    }

    deinit { close(descriptor) }

    /// Appends `text`; a write that fails part-way is cut back off.
    func write(_ text: String) throws(WriteFailure) {
        var bytes = Array(text.utf8)
        guard !bytes.isEmpty else { return }
        var written = 0
        let failure: Int32? = bytes.withUnsafeMutableBytes { buffer in
            while written < buffer.count {
                let count = pwrite(descriptor, buffer.baseAddress! + written, buffer.count - written, off_t(size) + off_t(written))
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { return count < 0 ? errno : EIO }
                written += count
            }
            return nil
        }
        if let failure {
            _ = ftruncate(descriptor, off_t(size))
            throw WriteFailure(name: path, errorNumber: failure)
        }
        size += Int64(bytes.count)
    }

    /// Cuts the file back to `length` bytes (a roll back with its WARC records).
    func truncate(to length: Int64) {
        guard length < size else { return }
        _ = ftruncate(descriptor, off_t(length))
        size = length
    }

    /// The lines of an existing index whose records start before `end`; "" when there is none.
    private static func linesBefore(_ end: Int64, in path: String) -> String {
        guard end > 0, let text = try? String(contentsOfFile: path, encoding: .utf8) else { return "" }
        var kept = ""
        for line in text.split(separator: "\n") where offset(of: line).map({ $0 < end }) ?? false {
            kept += line + "\n"
        }
        return kept
    }

    /// The `"offset": "N"` of a line.
    private static func offset(of line: Substring) -> Int64? {
        guard let range = line.range(of: "\"offset\": \"") else { return nil }
        return Int64(line[range.upperBound...].prefix { $0.isNumber })
    }
}
