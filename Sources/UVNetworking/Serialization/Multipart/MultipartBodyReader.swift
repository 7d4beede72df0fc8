import Foundation

/// Streams a multipart body, part after part, into buffers the caller provides: the pull side
/// that the transport (and `MultipartFormData.writeBody(to:)`) drains.
///
/// Memory: the reader keeps no buffer of its own. Boundaries and header blocks are small and
/// made once per reader; file and stream bytes go straight from read(2) or `InputStream.read`
/// into the caller's buffer, so a body of any size needs only that buffer
/// (`suggestedBufferSize` is a good size).
///
/// Threading: `read(into:)` blocks on file and stream I/O, so call it on a worker thread, never
/// on the event loop's thread. Calls are serialized by a lock, so the reader may be handed from
/// one worker job to the next; it is meant to be drained by one sender at a time.
///
/// Throttling: with a `throttle`, each read returns at most `throttle.packetSize` bytes, and the
/// sender waits `throttle.delay` after sending each packet before reading the next. The reader
/// does not sleep itself (AFNetworking's stream did): a sleeping read would hold one of the few
/// worker threads for the whole upload, where a timer on the loop costs nothing, and the sender
/// knows when the bytes actually left.
///
/// Integrity: the body is exactly `contentLength` bytes or the read fails. A file whose size
/// changed since it was appended, that shrinks or grows while being read, or a stream that ends
/// before its declared length or has bytes beyond it, fails with `.multipartFormDataFailed`; a
/// sender must then abort the request (close the connection), never pad or finish it. Every
/// later read throws the same error.
///
/// Files are opened one at a time when their part is reached and closed when it ends, on an
/// error, on `close()` or when the reader is released; streams are opened (if they were not) when
/// reached and closed the same way.
public final class MultipartBodyReader: @unchecked Sendable {
    // @unchecked: every mutable property is touched only with `lock` held (or in deinit); the
    // InputStreams inside `segments` were handed over with `sending` and only this reader has
    // them.

    /// A good buffer size for `read(into:)`: 64 KiB.
    public static let suggestedBufferSize = 64 * 1024

    /// The body's exact length; the bytes read add up to it or a read throws.
    public let contentLength: Int64
    /// The bandwidth throttle in force, if any: reads return at most `packetSize` bytes, and the
    /// sender waits `delay` seconds after each packet.
    public let throttle: BandwidthThrottle?

    private let lock = NSLock()
    private var segments: [MultipartSegment]
    private var index = 0
    /// Bytes of `segments[index]` already produced.
    private var offset = Int64(0)
    /// The open file of the current file segment, or -1.
    private var fileDescriptor = Int32(-1)
    /// The current stream segment's stream, once opened.
    private var openStream: InputStream?
    private var produced = Int64(0)
    private var failure: NetworkingError?

    init(segments: [MultipartSegment], contentLength: Int64, throttle: BandwidthThrottle?) {
        self.segments = segments
        self.contentLength = contentLength
        self.throttle = throttle
    }

    deinit {
        if fileDescriptor >= 0 { POSIXFile.closeDescriptor(fileDescriptor) }
        openStream?.close()
    }

    /// The bytes produced so far.
    public var bytesRead: Int64 {
        lock.lock()
        defer { lock.unlock() }
        return produced
    }

    /// Fills `buffer` with the next bytes of the body, as many as fit (at most the throttle's
    /// packet size), and returns how many; 0 means the body is complete. Blocks on file and
    /// stream I/O. `buffer` must not be empty.
    ///
    /// Throws `.multipartFormDataFailed` when a part cannot be read as announced (see the type's
    /// comment); the bytes already returned are then a prefix of a body that must not be
    /// completed.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        precondition(buffer.count > 0, "MultipartBodyReader.read(into:) needs a non-empty buffer")
        lock.lock()
        defer { lock.unlock() }
        if let failure { throw failure }
        do {
            return try fill(buffer)
        } catch {
            failure = error
            releaseCurrent()
            throw error
        }
    }

    /// Closes the open file or stream now. Later reads throw.
    public func close() {
        lock.lock()
        defer { lock.unlock() }
        releaseCurrent()
        if failure == nil && index < segments.count {
            failure = .multipart("the multipart body reader was closed before the end of the body")
        }
    }

    private func fill(_ buffer: UnsafeMutableRawBufferPointer) throws(NetworkingError) -> Int {
        let limit = min(buffer.count, throttle?.packetSize ?? Int.max)
        var written = 0
        while written < limit && index < segments.count {
            let destination = buffer.baseAddress! + written
            let room = limit - written
            switch segments[index] {
            case .bytes(let data):
                let count = min(room, data.count - Int(offset))
                data.withUnsafeBytes { source in
                    destination.copyMemory(from: source.baseAddress! + Int(offset), byteCount: count)
                }
                offset += Int64(count)
                written += count
                if offset == Int64(data.count) { advance() }
            case .file(let path, let size):
                written += try readFile(path: path, size: size, into: destination, room: room)
            case .stream(let stream, let length):
                written += try readStream(stream, length: length, into: destination, room: room)
            }
        }
        produced += Int64(written)
        // Cannot happen while the segments match the length; checked so a bug fails loudly
        // instead of sending a body that contradicts its Content-Length.
        if produced > contentLength || (index == segments.count && produced != contentLength) {
            throw .multipart("internal error: multipart body is \(produced) bytes, announced \(contentLength)")
        }
        return written
    }

    private func readFile(path: String, size: Int64, into destination: UnsafeMutableRawPointer,
                          room: Int) throws(NetworkingError) -> Int {
        if fileDescriptor < 0 {
            let fd = POSIXFile.openForReading(path)
            guard fd >= 0 else { throw .multipart("cannot open multipart file part \(path)", errno: errno) }
            fileDescriptor = fd
            try checkSize(path: path, expected: size, when: "since it was appended")
        }
        var count = 0
        if offset < size {
            count = POSIXFile.readSome(fileDescriptor, into: destination, count: Int(min(Int64(room), size - offset)))
            guard count >= 0 else { throw .multipart("cannot read multipart file part \(path)", errno: errno) }
            guard count > 0 else {
                throw .multipart("multipart file part \(path) ended after \(offset) of its \(size) bytes: it shrank while being read")
            }
            offset += Int64(count)
        }
        if offset == size {
            try checkSize(path: path, expected: size, when: "while being read")
            releaseCurrent()
            advance()
        }
        return count
    }

    private func checkSize(path: String, expected: Int64, when: String) throws(NetworkingError) {
        guard let size = try MultipartFile.regularFileSize(fileDescriptor) else {
            throw .multipart("multipart file part \(path) is no longer a regular file")
        }
        guard size == expected else {
            throw .multipart("multipart file part \(path) changed size \(when): \(expected) bytes announced, \(size) now")
        }
    }

    private func readStream(_ stream: InputStream, length: Int64, into destination: UnsafeMutableRawPointer,
                            room: Int) throws(NetworkingError) -> Int {
        if openStream == nil {
            if stream.streamStatus == .notOpen { stream.open() }
            openStream = stream
        }
        var count = 0
        if offset < length {
            let pointer = destination.bindMemory(to: UInt8.self, capacity: room)
            count = stream.read(pointer, maxLength: Int(min(Int64(room), length - offset)))
            guard count >= 0 else { throw streamError(stream) }
            guard count > 0 else {
                throw .multipart("multipart stream part ended after \(offset) of its declared \(length) bytes")
            }
            offset += Int64(count)
        }
        if offset == length {
            // One more byte must find the end: a longer stream would make the body lie.
            var extra = UInt8(0)
            let result = stream.read(&extra, maxLength: 1)
            guard result >= 0 else { throw streamError(stream) }
            guard result == 0 else {
                throw .multipart("multipart stream part has more than its declared \(length) bytes")
            }
            releaseCurrent()
            advance()
        }
        return count
    }

    private func streamError(_ stream: InputStream) -> NetworkingError {
        .multipart("cannot read multipart stream part: \(stream.streamError.map { "\($0)" } ?? "unknown error")")
    }

    private func advance() {
        index += 1
        offset = 0
    }

    /// Closes the current segment's file or stream.
    private func releaseCurrent() {
        if fileDescriptor >= 0 {
            POSIXFile.closeDescriptor(fileDescriptor)
            fileDescriptor = -1
        }
        openStream?.close()
        openStream = nil
    }
}
