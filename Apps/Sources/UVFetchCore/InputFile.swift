#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// The `-i` input, opened once: every pass, and the count for the progress line's total, read
/// the file that was opened, never the path again.
///
/// Opening the path a second time is what must not happen: for `<(cmd)`, `/dev/stdin` or a FIFO
/// it is the same pipe, and a second reader takes lines from the first. So only a regular file
/// is counted ahead (with `pread`, which leaves the passes' offset alone) or read more than
/// once (from where it started, for `--repeat`); anything else is read once, as it comes.
final class InputFile: Sendable {
    /// How the input is named in messages: its path, or "standard input" for `-`.
    let name: String
    /// Whether it is a regular file, which can be counted ahead and read again.
    let isRegularFile: Bool
    private let descriptor: Int32
    /// Where the passes start: 0, or for standard input the offset it was handed over at.
    private let start: off_t

    /// Opens `path` (`-` for standard input).
    /// - Throws: `FetchInputError.unreadable` when it cannot be opened, or is a directory.
    init(path: String) throws(FetchInputError) {
        let isStandardInput = path == "-"
        name = isStandardInput ? "standard input" : path
        // Standard input is duplicated, so closing ours leaves descriptor 0 to the process.
        let descriptor = isStandardInput ? fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 0) : open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .unreadable(path: name, reason: String(cString: strerror(errno))) }
        let status = try Self.status(of: descriptor, name: name)
        self.descriptor = descriptor
        isRegularFile = status.st_mode & S_IFMT == S_IFREG
        start = isRegularFile ? max(0, lseek(descriptor, 0, SEEK_CUR)) : 0
    }

    /// What fstat(2) says of a file just opened for reading, which must not be a directory (it
    /// opens, but read(2) fails): otherwise `descriptor` is closed and `unreadable` thrown.
    static func status(of descriptor: Int32, name: String) throws(FetchInputError) -> stat {
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT != S_IFDIR else {
            let reason = status.st_mode & S_IFMT == S_IFDIR ? EISDIR : errno
            close(descriptor)
            throw .unreadable(path: name, reason: String(cString: strerror(reason)))
        }
        return status
    }

    deinit { close(descriptor) }

    /// A reader for one pass: a regular file from its start every time; anything else from
    /// where the last pass left it (so, read once). One pass at a time: the readers share the
    /// file's offset.
    func makeReader() -> LineReader? {
        let copy = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else { return nil }
        if isRegularFile { lseek(copy, start, SEEK_SET) }
        return LineReader(descriptor: copy)
    }

    /// The entries one pass yields, or nil for input that is not a regular file (it can be
    /// read only once, and the passes read it). Reads the whole file with `pread`, so call it
    /// off the path that feeds requests.
    func countEntries() -> Int? {
        guard isRegularFile else { return nil }
        var counter = EntryCounter()
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 1)
        defer { chunk.deallocate() }
        var offset = start
        while true {
            let count = pread(descriptor, chunk.baseAddress, chunk.count, offset)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            counter.feed(UnsafeRawBufferPointer(rebasing: chunk[..<count]))
            offset += off_t(count)
        }
        return counter.finish()
    }
}
