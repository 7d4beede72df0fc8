import Dispatch
import Synchronization

/// Hands input entries from the thread that reads them to the queue that starts their requests,
/// so that reading (a pipe may block for as long as its writer likes) never holds up the queue,
/// and the queue never waits for a thread per request.
///
/// The reader `push`es entries as it reads them and blocks only once `capacity` wait unclaimed:
/// memory stays bounded whatever the input's length. The queue `take`s every waiting entry at
/// once; it finds none only when the reader is behind, and is then called back
/// (`onAvailable`) at the next push. Either side waits at most once per `capacity` entries in
/// steady state, so the hand-off costs no futex call per request.
final class EntryFeed<Element: Sendable>: Sendable {
    private struct State {
        var waiting: [Element] = []
        /// The reader has pushed its last entry.
        var ended = false
        /// The run stopped: pushes are refused and waiting entries dropped.
        var closed = false
        /// The queue found nothing: the next push or `end` calls `onAvailable`.
        var consumerWaiting = true
        /// The reader waits in `push` for the queue to take.
        var producerWaiting = false
    }

    private let state = Mutex(State())
    private let room = DispatchSemaphore(value: 0)
    private let capacity: Int
    private let onAvailable: @Sendable () -> Void

    /// At most `capacity` entries wait; `onAvailable` is called (on the pushing thread) when
    /// the queue found none and some arrived, or the input ended.
    init(capacity: Int, onAvailable: @escaping @Sendable () -> Void) {
        self.capacity = max(1, capacity)
        self.onAvailable = onAvailable
    }

    /// Adds `element`, then waits while `capacity` entries are unclaimed. False once the feed
    /// is closed: the reader stops.
    func push(_ element: Element) -> Bool {
        let (accepted, wake, full) = state.withLock { state -> (Bool, Bool, Bool) in
            guard !state.closed else { return (false, false, false) }
            state.waiting.append(element)
            let wake = state.consumerWaiting
            state.consumerWaiting = false
            let full = state.waiting.count >= capacity
            if full { state.producerWaiting = true }
            return (true, wake, full)
        }
        guard accepted else { return false }
        if wake { onAvailable() }
        if full {
            room.wait()
            return !state.withLock { $0.closed }
        }
        return true
    }

    /// No more entries will be pushed.
    func end() {
        let wake = state.withLock { state -> Bool in
            state.ended = true
            defer { state.consumerWaiting = false }
            return state.consumerWaiting
        }
        if wake { onAvailable() }
    }

    /// What `take` found.
    enum Batch {
        /// Entries, in the order they were pushed.
        case entries([Element])
        /// None yet: `onAvailable` will be called.
        case later
        /// The input ended (or the feed was closed) and every entry was taken.
        case ended
    }

    /// Every waiting entry.
    func take() -> Batch {
        let (batch, wakeReader) = state.withLock { state -> (Batch, Bool) in
            let wakeReader = state.producerWaiting
            state.producerWaiting = false
            if !state.waiting.isEmpty {
                var taken: [Element] = []
                swap(&taken, &state.waiting)
                state.waiting.reserveCapacity(min(taken.count, capacity))
                return (.entries(taken), wakeReader)
            }
            if state.ended || state.closed { return (.ended, wakeReader) }
            state.consumerWaiting = true
            return (.later, wakeReader)
        }
        if wakeReader { room.signal() }
        return batch
    }

    /// Stops the feed: waiting entries are dropped, a reader waiting in `push` returns false,
    /// and later pushes are refused.
    func close() {
        let wakeReader = state.withLock { state -> Bool in
            state.closed = true
            state.waiting.removeAll()
            defer { state.producerWaiting = false }
            return state.producerWaiting
        }
        if wakeReader { room.signal() }
    }
}
