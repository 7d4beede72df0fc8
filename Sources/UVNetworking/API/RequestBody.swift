import Foundation

/// A request body produced piece by piece, so that a body of any size is sent in bounded memory
/// (a multipart form, a file, bytes generated on the fly).
///
/// The session calls `read(into:)` on one of its worker threads, never on the event loop and never
/// concurrently: one read runs at a time, and the next starts only after the previous returned.
/// Blocking is allowed (a file read, a pipe); it holds one worker thread while it blocks.
/// The stream is released on a worker thread too, once the body ended, failed or was abandoned.
public protocol RequestBodyStream: AnyObject {
    /// Copies the next bytes of the body into `buffer` and returns how many (at most
    /// `buffer.count`); 0 means the body has ended. A thrown error fails the task with
    /// `NetworkingError.Code.bodyStreamFailed`, carrying the error as `underlyingError`.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int
}

/// A streamed request body: a factory for the stream, and the body's length when it is known.
///
/// Set it as `Request.bodyStream`. With a `length` the request carries `Content-Length` and the
/// stream must produce exactly that many bytes: one that ends early, or has more to give, fails
/// the task with `bodyStreamFailed` and no byte beyond `length` is sent. Without one the body is
/// sent with `Transfer-Encoding: chunked` (the server must accept chunked request bodies), unless
/// the request's own `Content-Length` field gives the length. A request that sets
/// `Transfer-Encoding: chunked` sends a body of known length chunked too, read to its end.
///
/// **Replay.** The factory is called each time the body is sent from its start: once per attempt,
/// so again when an idempotent request is retried on a fresh connection (see `Request`), and later
/// for redirects. Each call must return a new stream positioned at the body's first byte.
/// The factory runs on a worker thread, like the reads.
///
/// **From an AsyncSequence.** `init(length:bufferLimit:makeSequence:)` and
/// `init(length:bufferLimit:oneShot:)` make a body whose bytes come from an `AsyncSequence`,
/// iterated in a Swift task with a bounded buffer, without holding a worker thread; the same
/// length, framing and replay rules apply (see StreamedBody+AsyncSequence.swift).
public struct StreamedBody: Sendable, Equatable {
    /// The body's exact length in bytes, or nil to send it chunked.
    public let length: Int64?
    /// Sends the body at most `packetSize` bytes at a time, waiting `delay` between packets
    /// (AFNetworking's bandwidth throttling). The wait runs on a loop timer, so no worker
    /// thread sleeps. Nil sends as fast as the connection takes it.
    public var pacing: BandwidthThrottle?
    private let source: Source

    /// Holds the factory; its identity is the body's identity. A body made from an
    /// `AsyncSequence` has `async` instead (see StreamedBody+AsyncSequence.swift).
    private final class Source: Sendable {
        let makeStream: @Sendable () throws -> any RequestBodyStream
        let async: AsyncBodyOrigin?
        init(_ makeStream: @escaping @Sendable () throws -> any RequestBodyStream) {
            self.makeStream = makeStream
            self.async = nil
        }
        init(async origin: AsyncBodyOrigin) {
            self.makeStream = { throw AsyncBodyOrigin.NoBlockingStream() }
            self.async = origin
        }
    }

    /// A body read from the streams `makeStream` returns. `length`: the exact number of bytes every
    /// stream yields (sent as `Content-Length`), or nil to send the body chunked.
    public init(length: Int64?, _ makeStream: @escaping @Sendable () throws -> any RequestBodyStream) {
        precondition(length.map { $0 >= 0 } ?? true, "a body length cannot be negative")
        self.length = length
        self.source = Source(makeStream)
    }

    /// A body read from Foundation `InputStream`s (what AFNetworking sets as `HTTPBodyStream`).
    /// Each stream is opened before its first read and closed when the body ends or is abandoned.
    public init(length: Int64?, inputStream makeStream: @escaping @Sendable () throws -> InputStream) {
        self.init(length: length) { InputStreamBodyStream(try makeStream()) }
    }

    /// A body whose bytes come from an async sequence, iterated in a Swift task.
    init(length: Int64?, async origin: AsyncBodyOrigin) {
        precondition(length.map { $0 >= 0 } ?? true, "a body length cannot be negative")
        self.length = length
        self.source = Source(async: origin)
    }

    /// Where an async body's bytes come from; nil for a body read from `RequestBodyStream`s.
    var asyncOrigin: AsyncBodyOrigin? { source.async }

    private init(length: Int64?, source: Source, pacing: BandwidthThrottle?) {
        self.length = length
        self.source = source
        self.pacing = pacing
    }

    /// A new stream positioned at the body's first byte (calls the factory). A body made from an
    /// `AsyncSequence` has no blocking stream: this throws for it (the session sends it itself).
    public func makeStream() throws -> any RequestBodyStream {
        try source.makeStream()
    }

    /// The same factory with another length.
    func withLength(_ length: Int64?) -> StreamedBody {
        StreamedBody(length: length, source: source, pacing: pacing)
    }

    /// True when one value is a copy of the other (same factory) with the same length and
    /// pacing: factories are closures and cannot be compared otherwise.
    public static func == (lhs: StreamedBody, rhs: StreamedBody) -> Bool {
        lhs.source === rhs.source && lhs.length == rhs.length && lhs.pacing == rhs.pacing
    }
}

/// Reads a Foundation `InputStream` as a `RequestBodyStream`: opens it on the first read, closes it
/// at its end or when released. A read error (`streamError`) is thrown as is.
public final class InputStreamBodyStream: RequestBodyStream {
    private let stream: InputStream
    private var opened = false
    private var closed = false

    /// Wraps `stream`, which must not have been read from yet (it may already be open).
    public init(_ stream: InputStream) {
        self.stream = stream
    }

    /// Reads up to `buffer.count` bytes; 0 at the end of the stream.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard !closed, let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        if !opened {
            opened = true
            if stream.streamStatus == .notOpen { stream.open() }
        }
        let count = stream.read(base.assumingMemoryBound(to: UInt8.self), maxLength: buffer.count)
        if count < 0 || stream.streamStatus == .error {
            throw stream.streamError ?? InputStreamReadError()
        }
        if count == 0 { close() }
        return count
    }

    private func close() {
        guard opened, !closed else { return }
        closed = true
        stream.close()
    }

    deinit { close() }
}

/// An `InputStream` read failed without saying why (`streamError` was nil).
public struct InputStreamReadError: Error, Sendable, CustomStringConvertible {
    /// A short description.
    public var description: String { "the input stream failed without an error" }
}
