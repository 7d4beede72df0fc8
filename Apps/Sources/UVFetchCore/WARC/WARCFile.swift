#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Opens one file of a WARC archive for writing: always appending, never truncating, locked
/// against a second run, and, when it already holds records, checked and repaired first
/// (`WARCFileScan`).
///
/// O_APPEND rather than O_TRUNC is the whole point: a run that continues (`--resume`, a worker
/// started again with the same command line) must keep what the earlier run archived, since the
/// URLs it recorded are never fetched again. A symlink's target, a FIFO or a device is written
/// to in place, as `curl -o` does; only a regular file is locked, scanned or cut.
struct WARCFile {
    /// The open file.
    var output: LineOutput
    /// Its size once opened and repaired: where this run's records start.
    var size: Int64
    /// What was repaired, for standard error; nil when nothing was.
    var notice: String?

    /// Opens `path`, creating it when missing. With `continuing`, a file that holds records is
    /// read through (unless `scanning` is false: a file this run wrote itself) and a torn last
    /// record cut off.
    /// - Throws: `FetchInputError.cannotCreate` with open(2)'s reason; `.cannotAppend` when
    ///   another run holds the file's lock, or it is not a whole WARC file to add to.
    static func open(_ path: String, continuing: Bool, scanning: Bool = true) throws(FetchInputError) -> WARCFile {
        var status = stat()
        // Read and write for a regular file (it may be scanned), write only for anything else:
        // a FIFO opened for reading too would never see its reader go.
        let isRegular = stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFREG
        let descriptor = Glibc.open(path, (isRegular ? O_RDWR : O_WRONLY) | O_CREAT | O_APPEND | O_CLOEXEC | O_NOCTTY, 0o666)
        guard descriptor >= 0 else { throw .cannotCreate(path: path, reason: String(cString: strerror(errno))) }
        let output = LineOutput(descriptor: descriptor, name: path, owns: true)
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            return WARCFile(output: output, size: 0, notice: nil)
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let reason = errno == EWOULDBLOCK ? "another uvfetch run is writing to it" : String(cString: strerror(errno))
            throw .cannotAppend(path: path, reason: reason)
        }
        guard continuing, scanning, status.st_size > 0 else { return WARCFile(output: output, size: Int64(status.st_size), notice: nil) }
        let tail: WARCFileScan.Tail
        do {
            tail = try WARCFileScan.scan(descriptor)
        } catch {
            throw .cannotAppend(path: path, reason: error.reason)
        }
        switch tail {
        case .whole:
            return WARCFile(output: output, size: Int64(status.st_size), notice: nil)
        case .torn(let validEnd):
            guard ftruncate(descriptor, off_t(validEnd)) == 0 else {
                throw .cannotAppend(path: path, reason: "cutting off its incomplete last record failed: \(String(cString: strerror(errno)))")
            }
            let notice = "\(path): removed an incomplete record (\(Int64(status.st_size) - validEnd) bytes) at its end, left by a run that was killed"
            return WARCFile(output: output, size: validEnd, notice: notice)
        }
    }

    /// The next file of a rotating series, opened mid-run: a failure is a write error, as a
    /// failed write is. Appended to should it exist (another process made it since), never
    /// truncated.
    /// - Throws: `WriteFailure` with open(2)'s errno, or EWOULDBLOCK when another run holds it.
    static func openNext(_ path: String) throws(WriteFailure) -> LineOutput {
        let descriptor = Glibc.open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOCTTY, 0o666)
        guard descriptor >= 0 else { throw WriteFailure(name: path, errorNumber: errno) }
        let output = LineOutput(descriptor: descriptor, name: path, owns: true)
        var status = stat()
        if fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG, flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            throw WriteFailure(name: path, errorNumber: errno)
        }
        return output
    }
}
