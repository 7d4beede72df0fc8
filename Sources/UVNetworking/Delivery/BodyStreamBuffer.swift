import DequeModule
import Synchronization
import UVHTTP1

/// The hand-off between the loop and an `AsyncBodyStream`'s consumer: the loop pushes the head,
/// body chunks and the end; the consumer takes them in order. Thread-safe (one mutex).
///
/// Backpressure: `push` tells the loop to stop reading once `pauseThreshold` bytes are buffered;
/// after pausing, at most one more socket read (the loop's 64 KiB buffer) can still arrive, so
/// the buffered bytes stay below `highWaterMark`. When the consumer has drained the buffer to
/// `lowWaterMark`, it asks the loop (one `EventLoop.execute`) to read again.
///
/// The consumer can end the stream early (`cancelByConsumer`: a dropped iterator, a cancelled
/// consumer task): the remaining chunks are discarded, later pushes are dropped (and keep the
/// loop paused), and the task is cancelled, which aborts its connection.
final class BodyStreamBuffer: Sendable {
    /// The most body bytes held for a consumer at any time.
    static let defaultHighWaterMark = 256 * 1024
    /// Reading resumes once the consumer has drained the buffer to this many bytes.
    static let defaultLowWaterMark = 64 * 1024
    /// The most body bytes one socket read can deliver (the loop's read buffer).
    static let maximumReadSize = 64 * 1024

    let highWaterMark: Int
    let lowWaterMark: Int
    /// Pushes stop being welcome here: one more read cannot cross `highWaterMark`.
    private let pauseThreshold: Int

    private struct State {
        var chunks = Deque<[UInt8]>()
        var buffered = 0
        var peakBuffered = 0
        var pauseCount = 0
        /// Whether the loop has been told to stop reading and not yet told to resume.
        var producerPaused = false

        var head: ResponseHead?
        var headWaiter: CheckedContinuation<ResponseHead, any Error>?
        var chunkWaiter: CheckedContinuation<[UInt8]?, any Error>?

        /// The loop (or the consumer, by cancelling) ended the stream; `error` says how.
        var ended = false
        var error: (any Error)?
        /// The consumer has seen the end (nil or the error): every later `next` is nil.
        var endDelivered = false
        var consumerGone = false
        var iterationClaimed = false
        /// The task, until it finishes: to cancel it and to reach its runner. Dropped at the end,
        /// which breaks the task → buffer → task cycle.
        var task: SessionTask?
    }

    private let state: Mutex<State>

    init(task: SessionTask, highWaterMark: Int = defaultHighWaterMark, lowWaterMark: Int = defaultLowWaterMark) {
        precondition(highWaterMark > Self.maximumReadSize && lowWaterMark < highWaterMark - Self.maximumReadSize,
                     "the high-water mark must leave room for one socket read above the low-water mark")
        self.highWaterMark = highWaterMark
        self.lowWaterMark = lowWaterMark
        self.pauseThreshold = highWaterMark - Self.maximumReadSize
        var initial = State()
        initial.task = task
        self.state = Mutex(initial)
    }

    // MARK: Loop side (called by the task's runner on the loop thread)

    func receivedHead(_ head: ResponseHead) {
        let waiter = state.withLock { state -> CheckedContinuation<ResponseHead, any Error>? in
            state.head = head
            defer { state.headWaiter = nil }
            return state.headWaiter
        }
        waiter?.resume(returning: head)
    }

    /// Adds a body chunk; returns true when the loop should stop reading.
    func push(_ bytes: [UInt8]) -> Bool {
        let (waiter, pause) = state.withLock { state -> (CheckedContinuation<[UInt8]?, any Error>?, Bool) in
            if state.consumerGone || state.ended { return (nil, true) }
            if let waiter = state.chunkWaiter {
                // The consumer is waiting with an empty buffer: hand the chunk straight over.
                state.chunkWaiter = nil
                return (waiter, false)
            }
            state.chunks.append(bytes)
            state.buffered += bytes.count
            state.peakBuffered = max(state.peakBuffered, state.buffered)
            guard state.buffered >= pauseThreshold else { return (nil, false) }
            if !state.producerPaused {
                state.producerPaused = true
                state.pauseCount += 1
            }
            return (nil, true)
        }
        waiter?.resume(returning: bytes)
        return pause
    }

    /// Whether the consumer still wants the loop paused (a resume request may be stale).
    var isProducerPaused: Bool { state.withLock { $0.producerPaused || $0.consumerGone } }

    /// The task ended: nil error at the end of the body. Called exactly once, by the runner.
    func finish(error: NetworkingError?) {
        typealias Wake = (CheckedContinuation<ResponseHead, any Error>?, CheckedContinuation<[UInt8]?, any Error>?, (any Error)?)
        let (headWaiter, chunkWaiter, failure) = state.withLock { state -> Wake in
            state.task = nil
            if state.ended { return (nil, nil, nil) }
            state.ended = true
            state.error = error
            var failure: (any Error)? = error
            if failure == nil && state.head == nil {
                failure = NetworkingError(.malformedResponse, "the response ended without a head")
                state.error = failure
            }
            let headWaiter = state.headWaiter
            state.headWaiter = nil
            let chunkWaiter = state.chunkWaiter
            state.chunkWaiter = nil
            if chunkWaiter != nil { state.endDelivered = true }
            return (headWaiter, chunkWaiter, failure)
        }
        if let headWaiter { headWaiter.resume(throwing: failure!) }
        if let chunkWaiter {
            if let failure { chunkWaiter.resume(throwing: failure) } else { chunkWaiter.resume(returning: nil) }
        }
    }

    // MARK: Consumer side

    /// Waits for the response head, or throws the error the task ended with before it.
    func head() async throws -> ResponseHead {
        try await withCheckedThrowingContinuation { continuation in
            let ready = state.withLock { state -> Result<ResponseHead, any Error>? in
                if let head = state.head { return .success(head) }
                if state.ended { return .failure(state.error ?? NetworkingError(.cancelled, "the stream was cancelled")) }
                state.headWaiter = continuation
                return nil
            }
            if let ready { continuation.resume(with: ready) }
        }
    }

    /// The first iterator owns the stream; later ones get nothing.
    func claimIteration() -> Bool {
        state.withLock { state in
            defer { state.iterationClaimed = true }
            return !state.iterationClaimed
        }
    }

    var iterationClaimed: Bool { state.withLock { $0.iterationClaimed } }

    /// The next chunk; nil at the end; throws the task's error once.
    func next() async throws -> [UInt8]? {
        if Task.isCancelled { cancelByConsumer() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[UInt8]?, any Error>) in
                let (ready, resumeTask) = state.withLock { state -> (Result<[UInt8]?, any Error>?, SessionTask?) in
                    if let chunk = state.chunks.popFirst() {
                        state.buffered -= chunk.count
                        var resumeTask: SessionTask?
                        if state.producerPaused && state.buffered <= lowWaterMark && !state.consumerGone {
                            state.producerPaused = false
                            resumeTask = state.task
                        }
                        return (.success(chunk), resumeTask)
                    }
                    if state.endDelivered { return (.success(nil), nil) }
                    if state.ended {
                        state.endDelivered = true
                        if let error = state.error { return (.failure(error), nil) }
                        return (.success(nil), nil)
                    }
                    state.chunkWaiter = continuation
                    return (nil, nil)
                }
                if let resumeTask {
                    // Asks the loop to read again; the runner re-checks `isProducerPaused` there,
                    // since pushes may have filled the buffer again meanwhile.
                    _ = resumeTask.manager.loop(for: resumeTask).execute { resumeTask.loopRunner?.consumerDrained() }
                }
                if let ready { continuation.resume(with: ready) }
            }
        } onCancel: {
            cancelByConsumer()
        }
    }

    /// The consumer is gone (dropped iterator or stream, cancelled task): discard what is
    /// buffered, end the stream with `.cancelled` unless it had already ended, and cancel the
    /// task if it is still running.
    func cancelByConsumer() {
        let (task, waiter, error) = state.withLock { state -> (SessionTask?, CheckedContinuation<[UInt8]?, any Error>?, (any Error)?) in
            guard !state.consumerGone else { return (nil, nil, nil) }
            state.consumerGone = true
            state.chunks.removeAll()
            state.buffered = 0
            if !state.endDelivered {
                // The consumer stopped: whatever happened on the wire, its stream ends cancelled.
                state.ended = true
                state.error = NetworkingError(.cancelled, "the body stream's consumer stopped")
            }
            let task = state.task
            state.task = nil
            let waiter = state.chunkWaiter
            state.chunkWaiter = nil
            if waiter != nil { state.endDelivered = true }
            return (task, waiter, state.error)
        }
        waiter?.resume(throwing: error ?? NetworkingError(.cancelled, "the body stream's consumer stopped"))
        task?.cancel()
    }

    // MARK: For tests

    /// Body bytes buffered now, at the most so far, and how often the loop was paused.
    var bufferedByteCount: Int { state.withLock { $0.buffered } }
    var peakBufferedByteCount: Int { state.withLock { $0.peakBuffered } }
    var pauseCount: Int { state.withLock { $0.pauseCount } }
}
