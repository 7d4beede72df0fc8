#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// The `--jsonl` file of a `--resume` run: the URLs it already has records for, and the file
/// opened to append the records of the others.
///
/// The file is opened once, for reading and appending (O_APPEND: every write goes to its end,
/// nothing is ever truncated but a torn last line), and locked (flock) for the whole run, so a
/// second `--resume` run on the same file fails at once instead of fetching the same URLs. It
/// is created when missing: a first run with `--resume` is a fresh run. It must be a regular
/// file, since a pipe, a FIFO or a device cannot be read back.
///
/// A run that was killed may have left the start of a record at the end: it is cut off (it is
/// no record: its URL had not finished as far as the file knows, and is fetched again), and a
/// last record that is whole but lost its newline gets one, so the file stays JSON Lines. Any
/// other line that is not a record means this is not a record file: nothing is changed and the
/// run does not start.
public final class ResumableRecords {
    /// Where the new records go: the file, appended to.
    public let output: LineOutput
    /// The URLs recorded in the file, which the run skips.
    public let recorded: RecordedURLs
    /// What was repaired at the file's end, for standard error; nil when nothing was.
    public let notice: String?

    /// Opens `path`, reads its records and repairs its end.
    /// - Throws: `FetchInputError.cannotCreate` when the file cannot be opened (or created) for
    ///   reading and writing; `.notResumable` when it is standard output, not a regular file,
    ///   in use by another run, unreadable, or has a line that is not a record.
    public init(path: String) throws(FetchInputError) {
        if path == "-" || LineOutput.isStandardOutput(path) {
            throw .notResumable(path: path, reason: "it is standard output, which cannot be read back")
        }
        // O_NONBLOCK only so that opening a FIFO or a device cannot wait; a regular file ignores it.
        let descriptor = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0o666)
        guard descriptor >= 0 else { throw .cannotCreate(path: path, reason: String(cString: strerror(errno))) }
        var opened = false
        defer { if !opened { close(descriptor) } }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw .notResumable(path: path, reason: String(cString: strerror(errno))) }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw .notResumable(path: path, reason: "it is not a regular file, and only a regular file can be read back")
        }
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let reason = errno == EWOULDBLOCK ? "another uvfetch --resume run is appending to it" : String(cString: strerror(errno))
            throw .notResumable(path: path, reason: reason)
        }
        let recorded = RecordedURLs()
        let tail: RecordFileScan.Tail
        do {
            tail = try RecordFileScan.scan(descriptor, into: recorded)
        } catch let malformed as RecordFileScan.NotARecord {
            throw .notResumable(path: path, reason: "line \(malformed.line) is not a uvfetch record (\(malformed.reason)); give --resume the --jsonl file of an earlier run")
        } catch {
            throw .notResumable(path: path, reason: "reading it failed: \(error)")
        }
        notice = try Self.repair(tail, of: descriptor, path: path)
        output = LineOutput(descriptor: descriptor, name: path, owns: true)
        self.recorded = recorded
        opened = true
    }

    /// Cuts a torn last line off, or ends a whole last record with its newline; what was done,
    /// for the user.
    private static func repair(_ tail: RecordFileScan.Tail, of descriptor: Int32, path: String) throws(FetchInputError) -> String? {
        switch tail {
        case .whole:
            return nil
        case .missingNewline:
            var newline = UInt8(ascii: "\n")
            while write(descriptor, &newline, 1) < 0 {
                guard errno == EINTR else {
                    throw .notResumable(path: path, reason: "ending its last record with a newline failed: \(String(cString: strerror(errno)))")
                }
            }
            return "\(path): its last record had no newline; added one"
        case .torn(let line, let offset, let length):
            guard ftruncate(descriptor, off_t(offset)) == 0 else {
                throw .notResumable(path: path, reason: "cutting off its incomplete last line failed: \(String(cString: strerror(errno)))")
            }
            return "\(path): removed line \(line), an incomplete record (\(length) bytes) left by a run that was killed; its URL is fetched again"
        }
    }
}
