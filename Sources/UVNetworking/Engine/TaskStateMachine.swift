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
/// - `receivingBody`: end → `completed`; the end of a redirect the session follows (or of a
///   response a download drops to ask again) → `redirecting`.
/// - `redirecting`: the next request is being planned off the loop. follow → `waitingForConnection`
///   (a new exchange, maybe on another origin); deliver → `completed` (the redirect response is
///   the task's response); failure → `failed`.
/// - `waitingToRetry`: the session's retrier asked for another attempt after a delay (the
///   attempt failed, or its response's status asked for one and its body was dropped).
///   retryDue → `waitingForConnection`; cancel → `cancelled`.
/// - `completed`, `failed`, `cancelled`: terminal; every later event is ignored, which is what
///   makes completion exactly-once (a cancel racing with the last byte loses harmlessly). The
///   one way out of `failed` is `retryLater()`, which the runner calls in the same loop turn as
///   the failure, before the task is reported ended, when its retrier asks for another attempt.
///
/// A failure on a connection that had served an earlier request, before any response byte, is
/// retried once on a fresh connection when the request is replayable (Go's net/http rule: the
/// server most likely closed the idle connection as we reused it, and nothing was processed).
///
/// Beside the phase, three things decide what the runner does with a response while it arrives:
/// where its body goes (`destination`: the task's sink, or dropped for a redirect or a
/// download's restart), whether reading is paused for the body's consumer (`reading`), and
/// whether something holds the response's end (`end`: the `dataTaskDidReceiveResponse` hook, or a
/// redirect's plan being made off the loop).
struct TaskStateMachine: Sendable {
    enum State: Equatable, Sendable {
        case idle, waitingForConnection, sending, awaitingHead, receivingBody, redirecting, waitingToRetry
        case completed, failed, cancelled

        var isTerminal: Bool { self == .completed || self == .failed || self == .cancelled }
    }

    /// Where the body of the response in hand goes.
    enum BodyDestination: Equatable, Sendable {
        /// The task's response sink (memory, stream, file, counted and dropped); also before any
        /// head.
        case task
        /// A redirect the session follows, while its plan is made off the loop: reading is
        /// paused, and what one read brought is kept (a redirect the hook declines is the task's
        /// response after all).
        case redirectPlanning
        /// A redirect being followed: its body is dropped as it arrives.
        case redirectDraining
        /// A response a download drops to send its request again without Range, or one whose
        /// status the session's retrier answered with another attempt.
        case restartDraining

        /// The body is dropped and its end applies the next request.
        var isDrained: Bool { self == .redirectDraining || self == .restartDraining }
    }

    /// Whether reading is paused because the body's consumer is behind (an async stream's
    /// reader, a download's file writer, a redirect's plan). A caller's suspension is apart.
    enum Reading: Equatable, Sendable {
        case flowing
        case pausedForConsumer
    }

    /// What holds the response's end: the exchange may end (the connection goes back to its
    /// pool) while the task waits for an answer from off the loop.
    enum EndHold: Equatable, Sendable {
        case none
        /// `dataTaskDidReceiveResponse` has the head; body and end wait for its answer.
        /// `ended`: the response ended meanwhile.
        case hook(ended: Bool)
        /// The redirect's plan is being made (`destination` is `redirectPlanning`).
        case redirectPlan(ended: Bool)
    }

    /// What a redirect's plan decided, as far as the machine cares.
    enum RedirectPlan: Equatable, Sendable {
        /// Follow it; `drainable`: the rest of its body is cheaper to read than a new connection.
        case follow(drainable: Bool)
        /// The hook declined it: the redirect response is the task's.
        case deliver
        /// It cannot be followed; the plan's error fails the task once its body is done with.
        case fail
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
        /// The head is a redirect to follow: stop reading and plan the next request (off the
        /// loop) while its body waits.
        case startRedirectPlan
        /// The redirect's body is done with: apply the plan for the next request.
        case planRedirect
        /// The body of a response a download drops (or a retrier retries) is done with: plan its
        /// request again, without Range (or after the retrier's delay).
        case planRestart
        /// Reading is paused for the consumer no more: activity counts from now; `read`: read
        /// again (the task is not suspended, nothing holds the response).
        case consumerResumed(read: Bool)
        /// The response ended while its end is held: the exchange is over (its connection goes
        /// back to its pool, reading while idle); the task waits for the answer.
        case releaseConnection
        /// The plan says follow and drain: drop what was kept, and read the rest as it comes
        /// (`read`: unless suspended).
        case drainRedirectBody(read: Bool)
        /// The redirect's body is not worth reading: close the connection, then report
        /// `redirectBodyAbandoned`.
        case abandonRedirectBody
        /// The hook declined the redirect: its response is the task's, with the body kept so far;
        /// `ended`: the response ended already.
        case deliverRedirectResponse(ended: Bool)
        /// Give up whatever the task holds (its place in the queue, or its connection, which is
        /// closed) and fail with the error.
        case fail(NetworkingError.Code)
    }

    private(set) var state: State = .idle
    /// Suspended by the caller: before start it keeps the task from starting; while running it
    /// pauses reads.
    private(set) var isSuspended = true
    private(set) var hasRetried = false
    /// Replays of a request that a server said it never processed (`exchangeFailed(_:context:)`).
    private(set) var unprocessedReplays = 0
    private(set) var destination: BodyDestination = .task
    private(set) var reading: Reading = .flowing
    private(set) var end: EndHold = .none
    /// Whether the current request may be sent again (it changes when a redirect changes the
    /// method).
    private(set) var isReplayable: Bool

    init(isReplayable: Bool) {
        self.isReplayable = isReplayable
    }

    var isRunning: Bool { !state.isTerminal && state != .idle }

    var isPausedForConsumer: Bool { reading == .pausedForConsumer }

    /// Whether the connection should be reading now: neither the caller, nor the consumer, nor
    /// the hook holds it.
    var mayRead: Bool {
        if isSuspended || reading == .pausedForConsumer { return false }
        if case .hook(ended: false) = end { return false }
        return true
    }

    mutating func resume() -> Action {
        guard !state.isTerminal, isSuspended else { return .none }
        isSuspended = false
        switch state {
        case .idle:
            state = .waitingForConnection
            return .enqueue(requireFreshConnection: false)
        case .sending, .awaitingHead, .receivingBody:
            return mayRead ? .resumeReading : .none
        case .waitingForConnection, .redirecting, .waitingToRetry, .completed, .failed, .cancelled:
            return .none
        }
    }

    mutating func suspend() -> Action {
        guard !state.isTerminal, !isSuspended else { return .none }
        isSuspended = true
        switch state {
        case .sending, .awaitingHead, .receivingBody:
            return .pauseReading
        case .idle, .waitingForConnection, .redirecting, .waitingToRetry, .completed, .failed, .cancelled:
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

    /// The head arrived; its body goes to `destination`. A redirect to follow starts its plan.
    mutating func headReceived(_ destination: BodyDestination = .task) -> Action {
        guard state == .sending || state == .awaitingHead else { return .none }
        state = .receivingBody
        self.destination = destination
        guard destination == .redirectPlanning else { return .none }
        // Paused for its consumer, the plan: no idle timeout, and a resume does not read.
        reading = .pausedForConsumer
        end = .redirectPlan(ended: false)
        return .startRedirectPlan
    }

    /// The body's consumer is behind: stop reading until it drains.
    mutating func consumerBehind() -> Action {
        guard state == .receivingBody, reading == .flowing else { return .none }
        reading = .pausedForConsumer
        return .pauseReading
    }

    /// The body's consumer drained. `stillBehind`: it filled up again since it asked. A
    /// redirect's plan is not the consumer's to end.
    mutating func consumerDrained(stillBehind: Bool) -> Action {
        guard !state.isTerminal, reading == .pausedForConsumer, destination != .redirectPlanning, !stillBehind else { return .none }
        reading = .flowing
        return .consumerResumed(read: mayRead)
    }

    /// `dataTaskDidReceiveResponse` took the head: reading stops until its answer.
    mutating func hookHeldResponse() -> Action {
        guard state == .receivingBody, destination == .task, end == .none else { return .none }
        end = .hook(ended: false)
        return .pauseReading
    }

    /// The hook answered `allow` (`cancel` is an ordinary `cancel()`). The runner hands on the
    /// body that waited, then performs the action: the end that waited, or reading again.
    mutating func hookAllowedResponse() -> Action {
        guard !state.isTerminal, case .hook(let ended) = end else { return .none }
        end = .none
        if ended { return responseEnded() }
        return mayRead ? .resumeReading : .none
    }

    /// The plan of the redirect whose body waits came back.
    mutating func redirectPlanArrived(_ plan: RedirectPlan) -> Action {
        guard state == .receivingBody, destination == .redirectPlanning, case .redirectPlan(let ended) = end else { return .none }
        end = .none
        if plan == .deliver {
            // Reading stays paused until the kept body is replayed (`consumerDrained`).
            destination = .task
            if ended { reading = .flowing }
            return .deliverRedirectResponse(ended: ended)
        }
        destination = .redirectDraining
        reading = .flowing
        if ended { return responseEnded() }
        if plan == .follow(drainable: true) { return .drainRedirectBody(read: mayRead) }
        return .abandonRedirectBody
    }

    /// The connection was closed in the middle of a drained body: it counts as ended.
    mutating func redirectBodyAbandoned() -> Action {
        guard destination.isDrained else { return .none }
        return responseEnded()
    }

    /// The response ended.
    mutating func responseEnded() -> Action {
        guard state == .receivingBody else { return .none }
        switch end {
        case .hook(ended: false):
            end = .hook(ended: true)
            return .releaseConnection
        case .redirectPlan(ended: false):
            end = .redirectPlan(ended: true)
            return .releaseConnection
        case .hook(ended: true), .redirectPlan(ended: true), .none:
            break
        }
        if destination.isDrained {
            let restart = destination == .restartDraining
            state = .redirecting
            destination = .task
            return restart ? .planRestart : .planRedirect
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
        resetResponse()
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
    /// A body being drained that is cut short (closed, reset, truncated) was to be dropped
    /// anyway: the redirect goes on, as curl's does. While its plan is made, the failure stands.
    /// `exchangeFailed` with what the connection knew: a request the server said it never
    /// processed (HTTP/2 GOAWAY above its stream, REFUSED_STREAM) is sent again whatever its
    /// method, and so is a pipelined one left unanswered (only idempotent ones are pipelined). Replays from a connection that served other exchanges are free (the server makes
    /// progress: one that closes every connection after a few streams, under a burst, can refuse
    /// the same request many times); from one that served none, at most
    /// `maximumUnprocessedReplays`, so a server that refuses everything ends the task.
    mutating func exchangeFailed(_ code: NetworkingError.Code, context: ExchangeFailureContext) -> Action {
        if context.neverProcessed || context.unansweredInPipeline, !state.isTerminal, state == .sending || state == .awaitingHead,
           context.connectionMadeProgress || unprocessedReplays < Self.maximumUnprocessedReplays {
            if !context.connectionMadeProgress { unprocessedReplays += 1 }
            state = .waitingForConnection
            resetResponse()
            return .enqueue(requireFreshConnection: false)
        }
        return exchangeFailed(code, onReusedConnection: context.onReusedConnection, responseStarted: context.responseStarted)
    }

    /// How often one request is sent again after servers said they never processed it: enough
    /// for a server that closes every connection after a few streams, bounded so that one that
    /// refuses everything cannot keep a task alive for ever.
    static let maximumUnprocessedReplays = 10

    mutating func exchangeFailed(_ code: NetworkingError.Code, onReusedConnection: Bool, responseStarted: Bool) -> Action {
        guard !state.isTerminal else { return .none }
        if state == .receivingBody && destination.isDrained { return responseEnded() }
        let nothingProcessed = state == .sending || state == .awaitingHead
        if onReusedConnection && !responseStarted && nothingProcessed && isReplayable && !hasRetried
            && (code == .connectionClosed || code == .connectionReset || code == .writeFailed) {
            hasRetried = true
            state = .waitingForConnection
            resetResponse()
            return .enqueue(requireFreshConnection: true)
        }
        state = .failed
        return .fail(code)
    }

    /// The session's retrier asked for another attempt: from a failure just reported (`failed`,
    /// never `cancelled`), or from the end of a response dropped for its status (`redirecting`,
    /// after `planRestart`). Nothing happens until `retryDue()`. Returns whether the task waits.
    mutating func retryLater() -> Bool {
        guard state == .failed || state == .redirecting else { return false }
        state = .waitingToRetry
        return true
    }

    /// The retry's delay is over: the request is queued again, as a new exchange.
    mutating func retryDue() -> Action {
        guard state == .waitingToRetry else { return .none }
        state = .waitingForConnection
        // The stale-connection retry is per exchange, as after a redirect.
        hasRetried = false
        resetResponse()
        return .enqueue(requireFreshConnection: false)
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

    /// A new exchange starts: nothing of the last response is left.
    private mutating func resetResponse() {
        destination = .task
        reading = .flowing
        end = .none
    }
}
