/// A response body as it arrives, chunk by chunk, from `SessionManager.bytes(for:)`.
///
/// Memory stays bounded: at most `highWaterMark` body bytes wait for a slow consumer; beyond that
/// the client stops reading from the socket (TCP flow control then holds the server back) and
/// reads again once the consumer has drained the buffer to `lowWaterMark`.
///
/// Single pass. The first iterator owns the body; another iterator ends at once. Ending the
/// iteration early (a `break`, a thrown error, a cancelled consumer task), or dropping the stream
/// without iterating it, cancels the request: the connection is closed, not reused, and what is
/// buffered is discarded. Iterating to the end leaves the connection to the pool.
///
/// `next()` throws the task's `NetworkingError` when the response fails mid-body (a reset, a
/// truncated body, a timeout), and `NetworkingError.Code.cancelled` once its consumer task is
/// cancelled; after the end (nil or an error), it returns nil.
///
/// The request's `timeoutInterval` (an inactivity timeout) and the session's idle timeout do not
/// run while the client is paused for the consumer; `totalTimeoutInterval`, when set, covers the
/// whole body, time spent paused included.
public struct AsyncBodyStream: AsyncSequence, Sendable {
    public typealias Element = [UInt8]

    /// The most body bytes held for a consumer at any time (256 KiB).
    public static var highWaterMark: Int { BodyStreamBuffer.defaultHighWaterMark }
    /// Reading resumes once the consumer has drained the buffer to this many bytes (64 KiB).
    public static var lowWaterMark: Int { BodyStreamBuffer.defaultLowWaterMark }

    let buffer: BodyStreamBuffer
    private let owner: Owner

    init(_ buffer: BodyStreamBuffer) {
        self.buffer = buffer
        self.owner = Owner(buffer)
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(buffer: buffer, ownsStream: buffer.claimIteration())
    }

    /// Yields body chunks in order; nil at the end of the body.
    public struct Iterator: AsyncIteratorProtocol {
        private let buffer: BodyStreamBuffer
        /// Nil for an iterator that does not own the stream (not the first one).
        private let token: IterationToken?

        init(buffer: BodyStreamBuffer, ownsStream: Bool) {
            self.buffer = buffer
            self.token = ownsStream ? IterationToken(buffer) : nil
        }

        /// The next chunk of the body, nil at its end; throws if the response failed.
        public mutating func next() async throws -> [UInt8]? {
            guard token != nil else { return nil }
            return try await buffer.next()
        }
    }

    /// Cancels the request when the stream is dropped without ever being iterated.
    private final class Owner: Sendable {
        let buffer: BodyStreamBuffer
        init(_ buffer: BodyStreamBuffer) { self.buffer = buffer }
        deinit { if !buffer.iterationClaimed { buffer.cancelByConsumer() } }
    }

    /// Ends the stream when its iterator goes away: cancels the request unless it has ended, and
    /// frees what is buffered.
    private final class IterationToken: Sendable {
        let buffer: BodyStreamBuffer
        init(_ buffer: BodyStreamBuffer) { self.buffer = buffer }
        deinit { buffer.cancelByConsumer() }
    }
}
