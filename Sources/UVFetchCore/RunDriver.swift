import Dispatch
import Foundation

/// Keeps a run's requests going from its completion queue: each URL that ends starts the next
/// one there, at most `concurrency` at once, taking URLs from the `EntryFeed` that the reading
/// thread fills. Signals `finished` once, when the input has ended (or the run stopped) and no
/// URL is left in flight.
final class RunDriver: @unchecked Sendable {
    // @unchecked: `begin` runs before any entry is pushed; the rest of the state is touched only
    // on the completion queue.

    /// A URL read from the input, waiting for its turn.
    struct Pending: Sendable {
        let url: URL
        let text: String
        let bytes: [UInt8]?
    }

    /// The feed's way back to its driver, which does not exist yet when the feed is made.
    private final class Link: @unchecked Sendable {
        // @unchecked: set once, before the first push.
        weak var driver: RunDriver?
    }

    private let concurrency: Int
    private let queue: DispatchQueue
    private let finished: DispatchSemaphore
    /// Filled by the reading thread; taken from on the queue.
    let feed: EntryFeed<Pending>
    private var isStopping: @Sendable () -> Bool = { false }
    private var launch: (consuming Pending) -> Void = { _ in }
    /// Taken from the feed, not yet started, the next one last: each is moved out as it
    /// starts, never copied.
    // Unchecked: only the queue touches these (`assertOnQueue`); the runtime's exclusivity
    // checks would cost more per URL than the work they guard.
    @exclusivity(unchecked) private var taken: [Pending] = []
    @exclusivity(unchecked) private var inFlight = 0
    @exclusivity(unchecked) private var inputEnded = false
    @exclusivity(unchecked) private var signalled = false

    /// `readAhead`: the entries the reading thread may read before the queue takes them.
    init(concurrency: Int, queue: DispatchQueue, finished: DispatchSemaphore, readAhead: Int) {
        self.concurrency = max(1, concurrency)
        self.queue = queue
        self.finished = finished
        let link = Link()
        feed = EntryFeed(capacity: readAhead) { queue.async { link.driver?.pump() } }
        link.driver = self
    }

    /// Sets how a URL starts (on the queue; it must end with one `fetchEnded()`) and how a stop
    /// is seen. Call before the first push.
    func begin(isStopping: @escaping @Sendable () -> Bool, launch: @escaping (consuming Pending) -> Void) {
        self.isStopping = isStopping
        self.launch = launch
    }

    /// A URL ended, all its attempts done (on the queue): the next one starts.
    func fetchEnded() {
        assertOnQueue()
        inFlight -= 1
        pump()
    }

    /// Debug builds only: `dispatchPrecondition` checks in release builds too, which cost
    /// ~180 instructions a URL.
    @inline(__always)
    private func assertOnQueue() {
        assert({ dispatchPrecondition(condition: .onQueue(queue)); return true }())
    }

    /// Starts URLs while slots are free and the feed has some (on the queue); signals
    /// `finished` once nothing is left to wait for.
    func pump() {
        assertOnQueue()
        let stopping = isStopping()
        filling: while !stopping && inFlight < concurrency {
            if taken.isEmpty {
                switch feed.take() {
                case .entries(var batch):
                    // Reversed in place (the array is ours alone): swaps, no copies.
                    batch.reverse()
                    taken = batch
                case .later:
                    break filling
                case .ended:
                    inputEnded = true
                    break filling
                }
            }
            inFlight += 1
            launch(taken.removeLast())
        }
        if stopping {
            // Nothing kept that will not be started.
            taken = []
        }
        if inFlight == 0 && (inputEnded || stopping) && !signalled {
            signalled = true
            finished.signal()
        }
    }
}
