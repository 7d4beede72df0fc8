#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A file descriptor `uvfetch` writes whole lines to with write(2): standard output, or a file
/// the user named, opened as `curl -o` opens it.
///
/// Nothing is buffered here: each call hands the kernel complete lines (looping over partial
/// writes and EINTR), so a run that stops (^C, SIGTERM, a write error) leaves only complete lines
/// behind, and a failed write is seen at once, with its errno, instead of crashing or being
/// ignored. (A run gathers the lines of one batch of results in `PendingLines` first.)
public final class LineOutput: Sendable {
    /// How messages name it: the path given, or "standard output".
    public let name: String
    /// The descriptor written to.
    public let descriptor: Int32
    private let ownsDescriptor: Bool

    /// Standard output (descriptor 1), not closed by this object.
    public static let standardOutput = LineOutput(descriptor: STDOUT_FILENO, name: "standard output", owns: false)
    /// Standard error (descriptor 2), not closed by this object.
    public static let standardError = LineOutput(descriptor: STDERR_FILENO, name: "standard error", owns: false)

    /// Writes to `descriptor`, named `name` in messages; closed with this object if `owns`.
    init(descriptor: Int32, name: String, owns: Bool) {
        self.descriptor = descriptor
        self.name = name
        ownsDescriptor = owns
    }

    /// Opens `path` for writing as `curl -o` does: open(2) with O_CREAT|O_TRUNC, mode 0666 less
    /// the umask, links followed and nothing renamed, so a symlink's target, a FIFO, `/dev/fd/N`
    /// or a device are written to in place and an existing file keeps its mode. `-`, and any
    /// path that is standard output itself (`/dev/stdout`, or the file stdout was redirected
    /// to), mean standard output, which is then neither reopened nor truncated.
    /// - Throws: `FetchInputError.cannotCreate` with the reason open(2) gave.
    public static func open(path: String) throws(FetchInputError) -> LineOutput {
        if path == "-" || isStandardOutput(path) { return standardOutput }
        let descriptor = Glibc.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
        guard descriptor >= 0 else { throw .cannotCreate(path: path, reason: String(cString: strerror(errno))) }
        return LineOutput(descriptor: descriptor, name: path, owns: true)
    }

    /// Whether `path` names the file standard output already is: opening it again would give
    /// a second offset into it (lines written over each other) or truncate what `>>` keeps.
    static func isStandardOutput(_ path: String) -> Bool {
        var named = stat(), output = stat()
        guard stat(path, &named) == 0, fstat(STDOUT_FILENO, &output) == 0 else { return false }
        return named.st_dev == output.st_dev && named.st_ino == output.st_ino
    }

    /// Whether this is standard output.
    public var isStandardOutput: Bool { descriptor == STDOUT_FILENO }

    deinit { if ownsDescriptor { close(descriptor) } }

    /// Writes all of `text`.
    /// - Throws: `WriteFailure` with write(2)'s errno; what went out before it stays.
    public func write(_ text: String) throws(WriteFailure) {
        var text = text
        let errorNumber: Int32? = text.withUTF8 { Self.writeAll($0, to: descriptor, deadline: nil) }
        if let errorNumber { throw WriteFailure(name: name, errorNumber: errorNumber) }
    }

    /// Writes all of `bytes`.
    /// - Throws: `WriteFailure` with write(2)'s errno.
    public func write(_ bytes: Data) throws(WriteFailure) {
        let errorNumber: Int32? = bytes.withUnsafeBytes { Self.writeAll($0.bindMemory(to: UInt8.self), to: descriptor, deadline: nil) }
        if let errorNumber { throw WriteFailure(name: name, errorNumber: errorNumber) }
    }

    /// Writes whole lines (`bytes` ends with a newline) in as few write(2) calls as it can:
    /// pieces of at most PIPE_BUF bytes cut after a newline, which a pipe takes whole or not at
    /// all, so that a process killed while a write blocks leaves only whole lines behind (a
    /// line longer than that is one piece of its own).
    /// `written` is told, after each piece, how many bytes from the start are out (always after
    /// a whole line), so a caller can tell which lines a failure left unwritten.
    /// - Throws: `WriteFailure` with write(2)'s errno; the pieces before it stay whole.
    public func writeLines(_ bytes: [UInt8], written: (Int) -> Void = { _ in }) throws(WriteFailure) {
        let errorNumber: Int32? = bytes.withUnsafeBufferPointer { all in
            var start = 0
            while start < all.count {
                let end = Self.pieceEnd(all, from: start, limit: Int(PIPE_BUF))
                if let failure = Self.writeAll(UnsafeBufferPointer(rebasing: all[start..<end]), to: descriptor, deadline: nil) {
                    return failure
                }
                start = end
                written(end)
            }
            return nil
        }
        if let errorNumber { throw WriteFailure(name: name, errorNumber: errorNumber) }
    }

    /// Where the piece of `bytes` that starts at `start` ends: after the last newline within
    /// `limit` bytes, or after the first newline (or at the end) when one line is longer.
    static func pieceEnd(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, limit: Int) -> Int {
        var end = min(bytes.count, start + limit)
        guard end < bytes.count else { return end }
        var cut = end
        while cut > start && bytes[cut - 1] != UInt8(ascii: "\n") { cut -= 1 }
        if cut > start { return cut }
        while end < bytes.count && bytes[end - 1] != UInt8(ascii: "\n") { end += 1 }
        return end
    }

    /// Writes `text` if it can within `seconds`, for the last words of a process that is
    /// stopping: a terminal or pipe nobody reads must not keep it from exiting. Errors are
    /// dropped, as there is nowhere left to report them.
    public func writeWithin(seconds: Double, _ text: String) {
        var text = text
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9)
        _ = text.withUTF8 { Self.writeAll($0, to: descriptor, deadline: deadline) }
    }

    /// write(2) until every byte is out: a partial write goes on from where it stopped, EINTR
    /// retries, EAGAIN (a descriptor someone made non-blocking) waits in poll(2). A regular file
    /// that fills up part-way through is cut back to where the call started, so it ends with a
    /// whole line, never the first half of one. With a
    /// `deadline` (uptime nanoseconds) every write waits for room first, in pieces of at most
    /// PIPE_BUF, which a pipe takes whole once poll(2) says it has room. Returns the errno of a
    /// failure, ETIMEDOUT past the deadline, or nil.
    private static func writeAll(_ bytes: UnsafeBufferPointer<UInt8>, to descriptor: Int32, deadline: UInt64?) -> Int32? {
        var offset = 0
        while offset < bytes.count {
            var piece = bytes.count - offset
            if let deadline {
                let now = DispatchTime.now().uptimeNanoseconds
                guard now < deadline else { return ETIMEDOUT }
                var request = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                let ready = poll(&request, 1, Int32(min((deadline - now) / 1_000_000 + 1, 1000)))
                if ready == 0 || (ready < 0 && errno == EINTR) { continue }
                piece = min(piece, Int(PIPE_BUF))
            }
            let written = Glibc.write(descriptor, bytes.baseAddress! + offset, piece)
            if written >= 0 {
                offset += written
                continue
            }
            switch errno {
            case EINTR: continue
            case EAGAIN:
                var request = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                _ = poll(&request, 1, 100)
            case let failure:
                if offset > 0 { removeWritten(offset, from: descriptor) }
                return failure
            }
        }
        return nil
    }

    /// Takes the last `count` bytes written back off a regular file (a pipe or terminal has
    /// already passed them on).
    private static func removeWritten(_ count: Int, from descriptor: Int32) {
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return }
        let end = lseek(descriptor, 0, SEEK_CUR)
        if end >= off_t(count) { _ = ftruncate(descriptor, end - off_t(count)) }
    }
}

/// A write that failed: where, and write(2)'s errno. Ends a run with `ExitStatus.writeError`.
public struct WriteFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// The path given, or "standard output".
    public var name: String
    /// write(2)'s errno: ENOSPC, EPIPE, EIO, ...
    public var errorNumber: Int32

    /// Creates a failure of writing to `name`.
    public init(name: String, errorNumber: Int32) {
        self.name = name
        self.errorNumber = errorNumber
    }

    /// Whether the reader went away (a closed pipe or socket): what SIGPIPE stands for.
    public var isBrokenPipe: Bool { errorNumber == EPIPE }

    /// The message printed after "uvfetch: ", as in "write error on out.jsonl: No space left on device".
    public var description: String { "write error on \(name): \(String(cString: strerror(errorNumber)))" }
}
