import Synchronization

/// Moves one attempt's async request body from its producer — a Swift task iterating the
/// caller's `AsyncSequence` — to the connection, through an `AsyncBodyBuffer` of bounded size.
///
/// No thread waits: the producing task suspends while the buffer is full and is resumed when the
/// connection takes a chunk; the connection, when nothing is ready, leaves a callback that the
/// producing task calls once a chunk is (the reader turns it into an `EventLoop.execute`). The
/// task starts at the first chunk asked for, so an attempt that fails before its body (no
/// connection, a `417`) never iterates the sequence. `cancel()` drops what is held, resumes a
/// waiting producer and cancels its task, which ends the sequence's iteration (cooperatively:
/// a sequence that ignores cancellation keeps its task until it yields again).
final class AsyncBodyPump: Sendable {
    typealias Chunk = RequestBodyReader.Chunk
    typealias Deliver = @Sendable (Chunk) -> Void

    private struct State {
        var buffer: AsyncBodyBuffer
        var producerWaiting: CheckedContinuation<Void, Never>?
        var deliver: Deliver?
        var task: Task<Void, Never>?
        var started = false

        /// The waiting producer, when there is room for it now.
        mutating func takeResumableProducer() -> CheckedContinuation<Void, Never>? {
            guard buffer.hasRoom, let waiting = producerWaiting else { return nil }
            producerWaiting = nil
            return waiting
        }

        /// The call that hands `chunk` to the waiting connection, run outside the lock.
        mutating func delivery(of chunk: Chunk?) -> (() -> Void)? {
            guard let chunk, let deliver else { return nil }
            self.deliver = nil
            return { deliver(chunk) }
        }
    }
    private let state: Mutex<State>
    private let origin: AsyncBodyOrigin

    init(origin: AsyncBodyOrigin, length: Int64?) {
        self.origin = origin
        state = Mutex(State(buffer: AsyncBodyBuffer(declared: length, limit: origin.bufferLimit)))
    }

    // MARK: Connection side

    /// Asks for the next chunk of at most `max` body bytes. `deliver` gets it — at once, on this
    /// thread, when it is ready, else later on the producing task's thread. One request at a time.
    func requestChunk(max: Int, deliver: @escaping Deliver) {
        let (chunk, resume, start) = state.withLock { state -> (Chunk?, CheckedContinuation<Void, Never>?, Bool) in
            guard !state.buffer.cancelled else { return (nil, nil, false) }
            let start = !state.started
            state.started = true
            let chunk = state.buffer.take(max: max)
            if chunk == nil { state.deliver = deliver }
            return (chunk, state.takeResumableProducer(), start)
        }
        resume?.resume()
        if start { startProducing() }
        if let chunk { deliver(chunk) }
    }

    /// The exchange ended: no chunk is delivered any more, what is held goes, and the producer's
    /// iteration is cancelled. Idempotent.
    func cancel() {
        let (task, waiting, deliver) = state.withLock { state in
            state.buffer.cancel()
            defer { state.task = nil; state.producerWaiting = nil; state.deliver = nil }
            return (state.task, state.producerWaiting, state.deliver)
        }
        _ = deliver  // released here, outside the lock
        waiting?.resume()
        task?.cancel()
    }

    private func startProducing() {
        let producer = origin.producer
        let task = Task { [self] in
            await producer.produce(into: self)
            state.withLock { $0.task = nil }
        }
        let cancelled = state.withLock { state in
            guard !state.buffer.cancelled else { return true }
            state.task = task
            return false
        }
        if cancelled { task.cancel() }
    }

    // MARK: Producer side

    /// Hands over one element's bytes. Returns false when the producer must stop iterating (the
    /// exchange ended, or the body went past its declared length); suspends, before returning,
    /// while the buffer is full.
    func push(_ bytes: [UInt8]) async -> Bool {
        let (result, delivery) = state.withLock { state in
            let (result, chunk) = state.buffer.push(bytes)
            return (result, state.delivery(of: chunk))
        }
        origin.gauge?.record(self)
        delivery?()
        switch result {
        case .more: return true
        case .stop: return false
        case .waitForRoom:
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let goOn = state.withLock { state in
                    if state.buffer.hasRoom || state.buffer.cancelled { return true }
                    state.producerWaiting = continuation
                    return false
                }
                if goOn { continuation.resume() }
            }
            return !state.withLock { $0.buffer.cancelled }
        }
    }

    /// The sequence ended (`error` nil), or it or its factory failed (`error` says how).
    func finish(_ error: RequestBodyError?) {
        let delivery = state.withLock { state in
            let chunk = error.map { state.buffer.fail($0) } ?? state.buffer.finish()
            return state.delivery(of: chunk)
        }
        delivery?()
    }

    /// Body bytes handed over so far.
    var produced: Int64 { state.withLock { $0.buffer.produced } }

    /// The most bytes held at once so far.
    var maxBuffered: Int { state.withLock { $0.buffer.maxBuffered } }
}
