#if canImport(Glibc)
import Glibc
#endif
import Foundation
import UVNetworking

/// `--data-binary @FILE` for a large regular file: opened once, then read by every request from
/// its own offset with `pread`, so the run holds none of the file however many requests are in
/// flight and however large it is.
///
/// Every request reads the file that was opened, not the path again: a file renamed or replaced
/// during the run does not change the bodies. Its length is taken when it is opened; a file cut
/// shorter afterwards fails the requests still reading it (`bodyStreamFailed`), and bytes
/// appended are not sent.
final class FileBody: Sendable {
    private let path: String
    private let descriptor: Int32
    /// The body's length: the file's size when it was opened.
    let length: Int64

    /// Takes over `descriptor`, open for reading on the regular file `path` of `length` bytes.
    init(path: String, descriptor: Int32, length: Int64) {
        self.path = path
        self.descriptor = descriptor
        self.length = length
    }

    deinit { close(descriptor) }

    /// The body for `Request.bodyStream`: sent with a Content-Length, read on the session's
    /// workers, and read again from the start for a retry or a redirect.
    var streamedBody: StreamedBody {
        StreamedBody(length: length) { [self] in Reader(self) }
    }

    /// One request's pass over the file.
    private final class Reader: RequestBodyStream {
        private let file: FileBody
        private var offset: Int64 = 0

        init(_ file: FileBody) { self.file = file }

        func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
            let wanted = Int(min(Int64(buffer.count), file.length - offset))
            guard wanted > 0, let base = buffer.baseAddress else { return 0 }
            while true {
                let count = pread(file.descriptor, base, wanted, off_t(offset))
                if count >= 0 {
                    offset += Int64(count)
                    return count
                }
                guard errno == EINTR else {
                    throw NetworkingError(.bodyStreamFailed, "reading \(file.path) failed: \(String(cString: strerror(errno)))")
                }
            }
        }
    }
}
