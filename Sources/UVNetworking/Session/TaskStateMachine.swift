/// The life of one task, as a value: events in, actions out. No clock, no socket, no thread;
/// the task runner feeds it and performs what it returns.
///
/// States and their legal moves:
/// - `idle`: created, never resumed. resume → `waitingForConnection`; cancel → `cancelled`.
/// - `waitingForConnection`: queued in the pool (a connection is being found or opened: the
///   "connecting" phase). connectionAssigned → `sending`; failure → `failed`.
/// - `sending`: the request is being written. requestWritten → `awaitingHead`; a head may also
///   arrive before the write finishes (a server that answers early) → `receivingBody`.
/// - `awaitingHead`: written, waiting for the response head. head → `receivingBody`.
/// - `receivingBody`: end → `completed`; the end of a redirect the session follows →
///   `redirecting`.
/// - `redirecting`: the next request is being planned off the loop. follow → `waitingForConnection`
///   (a new exchange, maybe on another origin); deliver → `completed` (the redirect response is
///   the task's response); failure → `failed`.
/// - `completed`, `failed`, `cancelled`: terminal; every later event is ignored, which is what
///   makes completion exactly-once (a cancel racing with the last byte loses harmlessly).
///
/// A failure on a connection that had served an earlier request, before any response byte, is
/// retried once on a fresh connection when the request is replayable (Go's net/http rule: the
/// server most likely closed the idle connection as we reused it, and nothing was processed).
struct TaskStateMachine: Sendable {
    enum State: Equatable, Sendable {
        case idle, waitingForConnection, sending, awaitingHead, receivingBody, redirecting
        case completed, failed, cancelled

        var isTerminal: Bool { self == .completed || self == .failed || self == .cancelled }
    }

    enum Action: Equatable, Sendable {
        /// Nothing to do.
        case none
        /// Queue the request in the pool (the first time, or again for a retry).
        case enqueue(requireFreshConnection: Bool)
        /// Stop reading from the connection (suspend while running).
        case pauseReading
        /// Start reading again.
        case resumeReading
        /// Deliver the response: the task succeeded at the transport level.
        case succeed
        /// The response is a redirect to follow: plan the next request (off the loop).
        case planRedirect
        /// Give up whatever the task holds (its place in the queue, or its connection, which is
        /// closed) and fail with the error.
        case fail(NetworkingError.Code)
    }

    private(set) var state: State = .idle
    /// Suspended by the caller: before start it keeps the task from starting; while running it
    /// pauses reads.
    private(set) var isSuspended = true
    private(set) var hasRetried = false
    /// Whether the current request may be sent again (it changes when a redirect changes the
    /// method).
    private(set) var isReplayable: Bool

    init(isReplayable: Bool) {
        self.isReplayable = isReplayable
    }

    var isRunning: Bool { !state.isTerminal && state != .idle }

    mutating func resume() -> Action {
        guard !state.isTerminal, isSuspended else { return .none }
        isSuspended = false
        switch state {
        case .idle:
            state = .waitingForConnection
            return .enqueue(requireFreshConnection: false)
        case .sending, .awaitingHead, .receivingBody:
            return .resumeReading
        case .waitingForConnection, .redirecting, .completed, .failed, .cancelled:
            return .none
        }
    }

    mutating func suspend() -> Action {
        guard !state.isTerminal, !isSuspended else { return .none }
        isSuspended = true
        switch state {
        case .sending, .awaitingHead, .receivingBody:
            return .pauseReading
        case .idle, .waitingForConnection, .redirecting, .completed, .failed, .cancelled:
            // A queued task keeps its place: pausing a connection it does not have yet would only
            // block the pool. It pauses once it gets one.
            return .none
        }
    }

    mutating func cancel() -> Action {
        guard !state.isTerminal else { return .none }
        state = .cancelled
        return .fail(.cancelled)
    }

    /// The pool handed the task a connection. Returns `.pauseReading` if the caller suspended
    /// the task while it waited.
    mutating func connectionAssigned() -> Action {
        guard state == .waitingForConnection else { return .none }
        state = .sending
        return isSuspended ? .pauseReading : .none
    }

    mutating func requestWritten() -> Action {
        if state == .sending { state = .awaitingHead }
        return .none
    }

    mutating func headReceived() -> Action {
        guard state == .sending || state == .awaitingHead else { return .none }
        state = .receivingBody
        return .none
    }

    /// The response ended. `isRedirectToFollow`: its head was a redirect the session follows.
    mutating func responseEnded(isRedirectToFollow: Bool = false) -> Action {
        guard state == .receivingBody else { return .none }
        if isRedirectToFollow {
            state = .redirecting
            return .planRedirect
        }
        state = .completed
        return .succeed
    }

    /// The plan for a redirect is ready: follow it with a request that is (or is not) replayable.
    mutating func followRedirect(isReplayable: Bool) -> Action {
        guard state == .redirecting else { return .none }
        state = .waitingForConnection
        self.isReplayable = isReplayable
        // The stale-connection retry is per exchange.
        hasRetried = false
        return .enqueue(requireFreshConnection: false)
    }

    /// The redirect is not followed (the hook said so): its response is the task's.
    mutating func deliverRedirect() -> Action {
        guard state == .redirecting else { return .none }
        state = .completed
        return .succeed
    }

    /// The redirect cannot be followed (limit, refused downgrade, bad Location).
    mutating func redirectFailed(_ code: NetworkingError.Code) -> Action {
        guard state == .redirecting else { return .none }
        state = .failed
        return .fail(code)
    }

    /// The exchange failed. `onReusedConnection`: the connection had served a request before this
    /// one; `responseStarted`: some byte of a response had arrived.
    mutating func exchangeFailed(_ code: NetworkingError.Code, onReusedConnection: Bool, responseStarted: Bool) -> Action {
        guard !state.isTerminal else { return .none }
        let nothingProcessed = state == .sending || state == .awaitingHead
        if onReusedConnection && !responseStarted && nothingProcessed && isReplayable && !hasRetried
            && (code == .connectionClosed || code == .connectionReset || code == .writeFailed) {
            hasRetried = true
            state = .waitingForConnection
            return .enqueue(requireFreshConnection: true)
        }
        state = .failed
        return .fail(code)
    }

    /// The pool could not give the task a connection (DNS, refused, connect timeout).
    mutating func connectFailed(_ code: NetworkingError.Code) -> Action {
        guard state == .waitingForConnection else { return .none }
        state = .failed
        return .fail(code)
    }

    /// A timer fired. The runner arms the head and idle timers only in the phases they belong to,
    /// but a timer can race with the event that disarms it: such late firings do nothing.
    mutating func timedOut(_ code: NetworkingError.Code) -> Action {
        guard !state.isTerminal else { return .none }
        switch code {
        case .responseHeadTimeout where state != .awaitingHead && state != .sending: return .none
        case .idleTimeout where state != .receivingBody: return .none
        default: break
        }
        state = .failed
        return .fail(code)
    }

    /// The session is going away without letting the task run: `.cancelled` for a task it
    /// cancels, `.sessionInvalidated` for one started after the session was invalidated.
    mutating func invalidated(_ code: NetworkingError.Code) -> Action {
        guard !state.isTerminal else { return .none }
        state = code == .cancelled ? .cancelled : .failed
        return .fail(code)
    }
}
