/// A task's timeouts in loop milliseconds (`.max` = none), and the decisions its runner's timer
/// makes with them: which timeout has passed, and when to look again. A value with no clock and
/// no timer: the runner passes the loop's time and what it recorded.
///
/// The runner records activity cheaply (one store of the loop's cached time per read or
/// write) and never re-arms a timer per byte: a timer set for an old deadline fires early, the
/// runner asks `expiry`, gets nil, and arms again at `nextDeadline`.
struct TaskTimeouts: Equatable, Sendable {
    /// `Request.timeoutInterval`: the longest time without a byte sent or received.
    let inactivity: UInt64
    /// `Request.totalTimeoutInterval`: the longest time from `resume()` to the end.
    let total: UInt64
    /// `SessionConfiguration.responseHeadTimeout`: from the last request byte to the head.
    let responseHead: UInt64
    /// `SessionConfiguration.idleTimeout`: between two body bytes.
    let idle: UInt64

    init(inactivity: UInt64, total: UInt64, responseHead: UInt64, idle: UInt64) {
        self.inactivity = inactivity
        self.total = total
        self.responseHead = responseHead
        self.idle = idle
    }

    // Inlined so that a runner's init reads the two intervals in place instead of copying the
    // whole request (and retaining its fields) to pass it.
    @inline(__always)
    init(request: Request, settings: TaskSettings) {
        self.init(inactivity: LoopDuration.timeout(request.timeoutInterval),
                  total: LoopDuration.timeout(request.totalTimeoutInterval ?? .infinity),
                  responseHead: settings.responseHeadTimeout,
                  idle: settings.idleTimeout)
    }

    /// Which timeout passed.
    enum Expiry: Equatable, Sendable {
        case total, inactivity, responseHead, idle

        var code: NetworkingError.Code {
            switch self {
            case .total, .inactivity: return .requestTimeout
            case .responseHead: return .responseHeadTimeout
            case .idle: return .idleTimeout
            }
        }
    }

    /// What the runner recorded, in loop milliseconds.
    struct Moments: Equatable, Sendable {
        /// When the whole request must be over (`resume()` + `total`).
        var deadline: UInt64 = .max
        /// When the response head must have arrived (the last request byte + `responseHead`).
        var headDeadline: UInt64 = .max
        /// The last byte sent or received, or the start (`resume()`, or the caller's resume after
        /// a suspension, or reading again after a pause for the consumer).
        var lastActivity: UInt64 = 0
    }

    /// Where the task is, as far as timeouts go.
    struct Phase: Equatable, Sendable {
        var state: TaskStateMachine.State
        /// Suspended by the caller: the inactivity timeout does not run (URLSession's rule: a
        /// suspended task is not subject to timeouts); the total one does.
        var isSuspended = false
        /// Reading is paused because the body's consumer is behind: neither the inactivity nor
        /// the idle timeout runs, since the silence is ours.
        var isPausedForConsumer = false
    }

    /// The timeout that has passed at `now`, if any; the total one first, then the session's
    /// phase timeouts, then inactivity.
    func expiry(at now: UInt64, _ moments: Moments, _ phase: Phase) -> Expiry? {
        guard phase.state != .idle, !phase.state.isTerminal else { return nil }
        if now >= moments.deadline { return .total }
        if now >= headDeadline(moments, phase) { return .responseHead }
        if now >= idleDeadline(moments, phase) { return .idle }
        if now >= inactivityDeadline(moments, phase) { return .inactivity }
        return nil
    }

    /// When `expiry` can next say something other than nil; `.max` for never (as things stand:
    /// the runner asks again when the phase changes).
    func nextDeadline(_ moments: Moments, _ phase: Phase) -> UInt64 {
        guard phase.state != .idle, !phase.state.isTerminal else { return .max }
        // Nested two-argument mins: the variadic min(_:_:_:_:) builds an array on every call.
        return min(min(moments.deadline, headDeadline(moments, phase)),
                   min(idleDeadline(moments, phase), inactivityDeadline(moments, phase)))
    }

    private func headDeadline(_ moments: Moments, _ phase: Phase) -> UInt64 {
        phase.state == .sending || phase.state == .awaitingHead ? moments.headDeadline : .max
    }

    private func idleDeadline(_ moments: Moments, _ phase: Phase) -> UInt64 {
        guard phase.state == .receivingBody, !phase.isPausedForConsumer else { return .max }
        return LoopDuration.deadline(moments.lastActivity, plus: idle)
    }

    private func inactivityDeadline(_ moments: Moments, _ phase: Phase) -> UInt64 {
        guard !phase.isSuspended, !phase.isPausedForConsumer else { return .max }
        return LoopDuration.deadline(moments.lastActivity, plus: inactivity)
    }
}
