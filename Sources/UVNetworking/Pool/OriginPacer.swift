import DequeModule

/// Politeness towards one origin, as a value: requests start at least `interval` apart, in
/// arrival order. Times are loop milliseconds handed in by the caller, so the machine is tested
/// without a clock; the shell (`PoolPacing`) arms a timer where it is told to.
///
/// "Start" is the moment a request is handed a connection: a request the pacer lets through
/// (`release`) may still wait in the pool for one, so the pacer lets the next one through only
/// after the previous has started (or failed, or given up), and at least `interval` after that.
/// Spacing is thus kept on the wire, not merely at the pool's door: requests that queued for a
/// busy connection cannot leave back to back once it frees up.
///
/// The first request to an origin, and any request after a pause of `interval` or more, starts
/// at once: there is no burst allowance, and no catching up for time spent idle.
struct OriginPacer: Sendable {
    typealias RequestID = Int

    enum Action: Equatable, Sendable {
        case none
        /// Hand this request on to the pool now.
        case release(RequestID)
        /// Call `timerFired` at this time (loop milliseconds), replacing any earlier arming.
        case armTimer(at: UInt64)
    }

    /// Milliseconds between two starts; at least 1.
    let interval: UInt64
    /// Waiting for their turn, oldest first.
    private var held = Deque<RequestID>()
    /// Let through, not yet started: the next one waits for it.
    private(set) var released: RequestID?
    /// No start before this.
    private(set) var nextStart: UInt64 = 0
    /// When the shell's timer fires, .max when it is not armed: a timer is asked for only when
    /// none is armed for that time.
    private var timerDeadline: UInt64 = .max

    init(interval: UInt64) {
        self.interval = max(1, interval)
    }

    /// Requests waiting for their turn (not counting the one released).
    var heldCount: Int { held.count }

    /// Nothing waits and the last start lies `interval` or more before `now`: the pacer holds
    /// nothing that a fresh one would not (a pool may be dropped then).
    func isIdle(at now: UInt64) -> Bool { held.isEmpty && released == nil && now >= nextStart }

    /// A request wants to start at `now`.
    mutating func requestArrived(_ id: RequestID, at now: UInt64) -> Action {
        held.append(id)
        return advance(at: now)
    }

    /// The timer armed by `.armTimer` fired (late or early, it does not matter).
    mutating func timerFired(at now: UInt64) -> Action {
        timerDeadline = .max
        return advance(at: now)
    }

    /// The released request was handed a connection at `now`: the next one may start `interval`
    /// later. Also for a released request that failed or gave up: it may have opened a
    /// connection to the origin, so it counts as a start.
    mutating func requestStarted(_ id: RequestID, at now: UInt64) -> Action {
        guard id == released else { return .none }
        released = nil
        nextStart = max(nextStart, now &+ interval)
        return advance(at: now)
    }

    /// A request gave up (cancelled, timed out) at `now`, wherever it was.
    mutating func requestCancelled(_ id: RequestID, at now: UInt64) -> Action {
        if id == released { return requestStarted(id, at: now) }
        if let index = held.firstIndex(of: id) { held.remove(at: index) }
        // A timer armed for the removed request fires for nothing and arms no more: cheaper
        // than a stop now and a start again for the next arrival.
        return .none
    }

    /// Lets the oldest request through when nothing released is pending and its time has come;
    /// else asks for a timer at that time, unless one is armed for it (or the released request's
    /// start will come first).
    private mutating func advance(at now: UInt64) -> Action {
        guard released == nil, let first = held.first else { return .none }
        if now >= nextStart {
            held.removeFirst()
            released = first
            // The release itself counts as a start until the real one is known, so that a pacer
            // told nothing more still spaces its releases.
            nextStart = now &+ interval
            return .release(first)
        }
        guard timerDeadline != nextStart else { return .none }
        timerDeadline = nextStart
        return .armTimer(at: nextStart)
    }

    /// The spacing that a delay and a rate ask for: the larger of `delay` seconds and
    /// `1 / requestsPerSecond`, rounded up to whole milliseconds (the loop's timer resolution);
    /// nil when neither asks for any (both absent, zero, negative, NaN or infinite rate).
    static func interval(delay: Double, requestsPerSecond: Double?) -> UInt64? {
        var seconds = delay.isFinite && delay > 0 ? delay : 0
        if let rate = requestsPerSecond, rate.isFinite, rate > 0 { seconds = max(seconds, 1 / rate) }
        guard seconds > 0 else { return nil }
        // Beyond a year is as good as never, and keeps the milliseconds far from overflowing.
        return UInt64((min(seconds, 365 * 86_400) * 1000).rounded(.up))
    }
}
