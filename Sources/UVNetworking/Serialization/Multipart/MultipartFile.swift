#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// The checks a file part gets at append time, and its size while it is read (the reads
/// themselves are `POSIXFile`'s).
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
        let fd = POSIXFile.openForReading(path)
        guard fd >= 0 else { throw .multipart("file \(path) for a multipart part cannot be read", errno: errno) }
        close(fd)
        return (path, Int64(info.st_size))
    }

    /// The size of the regular file open as `fd`, or nil when it is no longer a regular file.
    static func regularFileSize(_ fd: Int32) throws(NetworkingError) -> Int64? {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .multipart("cannot inspect a multipart file part", errno: errno) }
        return isType(info, S_IFREG) ? Int64(info.st_size) : nil
    }

    private static func isType(_ info: stat, _ type: mode_t) -> Bool {
        info.st_mode & S_IFMT == type
    }
}
