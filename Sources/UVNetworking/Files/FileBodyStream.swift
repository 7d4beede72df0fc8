#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Reads a regular file as a request body: opened when made (on a worker, by the body's factory),
/// read with read(2) a chunk at a time, closed when released.
final class FileBodyStream: RequestBodyStream {
    private let path: String
    private var fd: Int32

    /// Opens `path` for reading; throws the file error URLSession would report.
    init(path: String) throws(NetworkingError) {
        let fd = POSIXFile.openForReading(path)
        guard fd >= 0 else { throw .fileUnreadable(path, errno: errno) }
        self.path = path
        self.fd = fd
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard fd >= 0, let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        let count = POSIXFile.readSome(fd, into: base, count: buffer.count)
        guard count >= 0 else { throw NetworkingError.file(.cannotOpenFile, "reading \(path) failed", errno: errno) }
        return count
    }

    deinit {
        if fd >= 0 { POSIXFile.closeDescriptor(fd) }
    }
}

extension StreamedBody {
    /// A body read from the file at `fileURL` in bounded memory: opened and read on the worker
    /// pool when the request is sent (again for a retry or a 307/308 redirect), sent with a
    /// Content-Length of the file's size now.
    ///
    /// The file is checked here, on the calling thread (one `stat` and one `open`), so a missing
    /// or unreadable file is an error before anything is sent: `fileDoesNotExist`,
    /// `fileIsDirectory`, `noPermissionsToReadFile`, or `cannotOpenFile` (not a regular file, or
    /// not a file URL). A file whose size changes before it has been sent fails the task with
    /// `bodyStreamFailed`; no byte beyond the announced length goes out.
    public init(contentsOf fileURL: URL) throws(NetworkingError) {
        guard fileURL.isFileURL else {
            throw NetworkingError(.cannotOpenFile, "expected a file URL to upload, got \(LogRedaction.url(fileURL))")
        }
        let path = fileURL.path
        guard let status = POSIXFile.status(atPath: path) else { throw .fileUnreadable(path, errno: errno) }
        guard !status.isDirectory else { throw .fileUnreadable(path, errno: EISDIR) }
        // FIFOs, sockets and devices have no size to announce in Content-Length.
        guard status.isRegularFile else {
            throw NetworkingError(.cannotOpenFile, "\(path) is not a regular file")
        }
        let size = status.size
        // Opening is the only reliable readability check (access(2) answers for the real uid);
        // the stream opens the file again when the body is sent.
        _ = try FileBodyStream(path: path)
        self.init(length: size) { try FileBodyStream(path: path) }
    }
}
