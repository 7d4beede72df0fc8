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
        /// For a URL put back to wait for its host (`putBack`): how it carries on when its
        /// turn comes, instead of starting afresh.
        var carryOn: (@Sendable () -> Void)? = nil
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
    /// With pacing per host: the URLs taken and set aside until their host's turn; nil (and not
    /// looked at again) for an unpaced run.
    @exclusivity(unchecked) private var turns: HostTurns<Pending>?
    /// When the wake-up queued for the next host's turn comes (uptime nanoseconds), if one is.
    @exclusivity(unchecked) private var wakeAt: UInt64?

    /// `readAhead`: the entries the reading thread may read before the queue takes them.
    /// `pacing`: the seconds between two URLs of one host (scheme, host, port), nil for none;
    /// `managesHosts`: hosts may be held, blocked or paced later (`hold`, `block`,
    /// `setInterval`) even without pacing; `lookAhead`: then the most URLs set aside while their
    /// host waits for its turn.
    init(concurrency: Int, queue: DispatchQueue, finished: DispatchSemaphore, readAhead: Int,
         pacing: Double? = nil, managesHosts: Bool = false, lookAhead: Int = 16_384) {
        if let pacing, pacing > 0 {
            turns = HostTurns(interval: Self.nanoseconds(pacing), capacity: lookAhead)
        } else if managesHosts {
            turns = HostTurns(interval: 0, capacity: lookAhead)
        }
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

    /// A URL ended, all its attempts done (on the queue): the next one starts. `url` is the
    /// URL the slot was launched with (nil for a slot spent on something else, a robots.txt),
    /// `requested` false when it was never requested: a paced host's next turn counts from here
    /// (`HostTurns.ended`).
    func fetchEnded(_ url: URL? = nil, requested: Bool = true) {
        assertOnQueue()
        inFlight -= 1
        if turns != nil, let url {
            turns!.ended(Self.hostKey(url), at: DispatchTime.now().uptimeNanoseconds, spaced: requested)
        }
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
        if turns != nil { return pumpPaced() }
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

// MARK: Pacing per host

extension RunDriver {
    /// `pump` for a paced run: URLs are taken from the feed into the hosts' queues (up to the
    /// look-ahead), and started when their host's turn has come, so a paced host never fills
    /// the slots in flight with URLs that would only wait there. Every URL taken is started
    /// (or dropped by a stop), so every URL gets its record.
    private func pumpPaced() {
        let stopping = isStopping()
        if stopping {
            taken = []
            turns!.removeAll()
        } else {
            var launched = true
            while launched && inFlight < concurrency {
                fillTurns()
                launched = false
                let now = DispatchTime.now().uptimeNanoseconds
                while inFlight < concurrency, let next = turns!.next(at: now) {
                    inFlight += 1
                    launched = true
                    if let carryOn = next.carryOn { carryOn() } else { launch(next) }
                }
            }
            fillTurns()
            // Free slots and URLs waiting for a turn: come back then. A full run is woken by
            // its next result instead.
            if inFlight < concurrency, let at = turns!.nextTurn { wake(at: at) }
        }
        let drained = stopping || (inputEnded && taken.isEmpty && turns!.isEmpty)
        if inFlight == 0 && drained && !signalled {
            signalled = true
            finished.signal()
        }
    }

    /// Moves URLs from the feed into the hosts' queues while the look-ahead has room.
    private func fillTurns() {
        while !turns!.isFull {
            if taken.isEmpty {
                guard !inputEnded else { return }
                switch feed.take() {
                case .entries(var batch):
                    batch.reverse()
                    taken = batch
                case .later:
                    return
                case .ended:
                    inputEnded = true
                    return
                }
            }
            let next = taken.removeLast()
            turns!.add(next, host: Self.hostKey(next.url))
        }
    }

    /// Whether hosts can be held, blocked and paced (`init`'s `managesHosts` or pacing).
    var managesHosts: Bool { turns != nil }

    /// No URL of `url`'s host starts for `seconds` (on the queue): a Retry-After speaks for the
    /// host. Only for a run that manages hosts.
    func hold(hostOf url: URL, for seconds: Double) {
        assertOnQueue()
        turns?.hold(Self.hostKey(url), until: DispatchTime.now().uptimeNanoseconds &+ Self.nanoseconds(seconds))
    }

    /// Puts `pending` back first in its host's line (on the queue); its `carryOn` runs when the
    /// host's turn comes. The caller then ends the URL's turn with `fetchEnded`, freeing its
    /// slot for other hosts meanwhile.
    func putBack(_ pending: Pending) {
        assertOnQueue()
        turns!.addFirst(pending, host: Self.hostKey(pending.url))
    }

    /// No URL of `url`'s host starts until `unblock` (on the queue).
    func block(hostOf url: URL) {
        assertOnQueue()
        turns!.block(Self.hostKey(url))
    }

    /// `url`'s host goes on (on the queue), its URLs spaced by `interval` seconds from now on
    /// when given.
    func unblock(hostOf url: URL, interval: Double? = nil) {
        assertOnQueue()
        let key = Self.hostKey(url)
        if let interval, interval > 0 { turns!.setInterval(Self.nanoseconds(interval), for: key) }
        turns!.unblock(key, at: DispatchTime.now().uptimeNanoseconds)
        pump()
    }

    /// Seconds as nanoseconds, at most a year (a Crawl-delay or Retry-After of any size).
    private static func nanoseconds(_ seconds: Double) -> UInt64 {
        UInt64((min(max(0, seconds), 365 * 86_400) * 1e9).rounded(.up))
    }

    /// Queues a pump at `at` (uptime nanoseconds) unless one comes no later.
    private func wake(at: UInt64) {
        if let wakeAt, wakeAt <= at, wakeAt > DispatchTime.now().uptimeNanoseconds { return }
        wakeAt = at
        queue.asyncAfter(deadline: DispatchTime(uptimeNanoseconds: max(at, 1))) { [weak self] in
            guard let self else { return }
            if self.wakeAt == at { self.wakeAt = nil }
            self.pump()
        }
    }

    /// What is paced: the origin (scheme, host, port), the unit the library paces and limits
    /// connections by.
    static func hostKey(_ url: URL) -> String {
        let scheme = url.scheme?.lowercased() ?? ""
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        return "\(scheme)://\(url.host?.lowercased() ?? ""):\(port)"
    }
}
