#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// POSIX file access for file parts: the checks made at append time and the reads made later.
/// Plain POSIX calls rather than FileHandle so that every failure has an errno and nothing is
/// ever read whole.
enum MultipartFile {
    /// Checks that `url` names a regular file this process can open for reading (AFNetworking's
    /// checks at append time, plus the directory and readability ones), and returns its path and
    /// size.
    static func probe(_ url: URL) throws(NetworkingError) -> (path: String, size: Int64) {
        guard url.isFileURL else {
            throw .multipart("expected a file URL for a multipart file part, got \(url.absoluteString)")
        }
        let path = url.path
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw .multipart("file \(path) for a multipart part is not reachable", errno: errno)
        }
        guard !isType(info, S_IFDIR) else { throw .multipart("\(path) for a multipart file part is a directory") }
        // FIFOs, sockets and devices have no size to announce in Content-Length.
        guard isType(info, S_IFREG) else { throw .multipart("\(path) for a multipart file part is not a regular file") }
        // Opening is the only reliable readability check (access(2) answers for the real uid and
        // ignores ACL subtleties); the descriptor is closed again, files are opened when read.
        let fd = openForReading(path)
        guard fd >= 0 else { throw .multipart("file \(path) for a multipart part cannot be read", errno: errno) }
        close(fd)
        return (path, Int64(info.st_size))
    }

    /// A read-only, close-on-exec descriptor, or -1 with errno set.
    static func openForReading(_ path: String) -> Int32 {
        open(path, O_RDONLY | O_CLOEXEC)
    }

    /// close(2), for types whose own `close()` hides it.
    static func closeDescriptor(_ fd: Int32) {
        close(fd)
    }

    /// The size of the regular file open as `fd`, or nil when it is no longer a regular file.
    static func regularFileSize(_ fd: Int32) throws(NetworkingError) -> Int64? {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .multipart("cannot inspect a multipart file part", errno: errno) }
        return isType(info, S_IFREG) ? Int64(info.st_size) : nil
    }

    /// read(2) retried on EINTR: bytes read, 0 at end of file.
    static func readSome(_ fd: Int32, into pointer: UnsafeMutableRawPointer, count: Int) -> Int {
        while true {
            let result = read(fd, pointer, count)
            if result >= 0 || errno != EINTR { return result }
        }
    }

    /// write(2) of all `count` bytes, retried on EINTR and short writes; false with errno set on
    /// failure.
    static func writeAll(_ fd: Int32, _ pointer: UnsafeRawPointer, count: Int) -> Bool {
        var done = 0
        while done < count {
            let result = write(fd, pointer + done, count - done)
            if result < 0 {
                if errno == EINTR { continue }
                return false
            }
            done += result
        }
        return true
    }

    private static func isType(_ info: stat, _ type: mode_t) -> Bool {
        info.st_mode & S_IFMT == type
    }
}
