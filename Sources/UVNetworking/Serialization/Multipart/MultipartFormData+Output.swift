#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

extension MultipartFormData {
    /// Writes the whole body to `fileURL` in bounded memory, replacing any file there
    /// (AFNetworking's requestWithMultipartFormRequest:writingStreamContentsToFile: role, for
    /// uploading the body from a file later).
    ///
    /// The body goes to a temporary file beside `fileURL` that is renamed over it only when
    /// complete, so a failure leaves no partial body behind and an existing file untouched.
    /// The bandwidth throttle does not apply (nothing goes over the network). Blocks on file I/O.
    /// Throws `.multipartFormDataFailed` when `fileURL` is not a file URL, a part cannot be read,
    /// or writing fails.
    public func writeBody(to fileURL: URL) throws {
        guard fileURL.isFileURL else {
            throw NetworkingError.multipart("expected a file URL to write the multipart body to, got \(fileURL.absoluteString)")
        }
        let reader = try makeBodyReader()
        let path = fileURL.path
        let temporaryPath = fileURL.deletingLastPathComponent()
            .appendingPathComponent(".\(fileURL.lastPathComponent).\(MultipartBoundary.random()).partial").path
        let fd = open(temporaryPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw NetworkingError.multipart("cannot create \(temporaryPath)", errno: errno) }
        var closed = false
        defer {
            if !closed {
                close(fd)
                unlink(temporaryPath)
            }
        }
        var buffer = [UInt8](repeating: 0, count: MultipartBodyReader.suggestedBufferSize)
        try buffer.withUnsafeMutableBytes { buffer in
            while true {
                let count = try reader.read(into: buffer)
                if count == 0 { break }
                guard POSIXFile.writeAll(fd, buffer.baseAddress!, count: count) else {
                    throw NetworkingError.multipart("cannot write the multipart body to \(temporaryPath)", errno: errno)
                }
            }
        }
        closed = true
        guard close(fd) == 0 else {
            let code = errno
            unlink(temporaryPath)
            throw NetworkingError.multipart("cannot write the multipart body to \(temporaryPath)", errno: code)
        }
        guard rename(temporaryPath, path) == 0 else {
            let code = errno
            unlink(temporaryPath)
            throw NetworkingError.multipart("cannot move the multipart body to \(path)", errno: code)
        }
    }

    /// The whole body in memory, for small bodies and tests; `writeBody(to:)` or a reader for
    /// large ones. The throttle does not apply. Blocks on file I/O.
    public func data() throws -> Data {
        let reader = try makeBodyReader()
        var result = Data(capacity: Int(reader.contentLength))
        var buffer = [UInt8](repeating: 0, count: MultipartBodyReader.suggestedBufferSize)
        try buffer.withUnsafeMutableBytes { buffer in
            while true {
                let count = try reader.read(into: buffer)
                if count == 0 { break }
                result.append(buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), count: count)
            }
        }
        return result
    }
}
