import Foundation
import HTTPTypes

/// The loop-side half of a task: owns its state machine, its deadlines and its response while it
/// runs, and performs what the machine decides. Loop-confined.
///
/// Stored properties opt out of runtime exclusivity checks: only the loop thread touches them,
/// and the state machines rule out re-entrant mutation. The checks cost more per request than
/// the work they guard.
final class TaskRunner {
    let task: SessionTask
    unowned let engine: SessionEngine
    let loop: EventLoop
    @exclusivity(unchecked) var machine: TaskStateMachine
    @exclusivity(unchecked) private var pool: ConnectionPool?
    @exclusivity(unchecked) private(set) var connection: HTTP1Connection?
    /// Set only when the manager has hooks (see TaskRunner+Hooks.swift).
    @exclusivity(unchecked) var hookState: TaskHookState?

    /// The request's and the session's timeouts (TaskTimeouts decides with them).
    private let timeouts: TaskTimeouts
    /// When the whole request must be over (`Request.totalTimeoutInterval`); .max for never.
    @exclusivity(unchecked) private var requestDeadline: UInt64 = .max
    @exclusivity(unchecked) private var headDeadline: UInt64 = .max
    /// The last byte sent or received (or the start, or a resume): what the inactivity and idle
    /// timeouts count from. One store per read or write; the timer is not touched.
    @exclusivity(unchecked) private var lastByteAt: UInt64 = 0

    /// The final response head, once it arrived; turned into an HTTPResponse off the loop.
    @exclusivity(unchecked) var head: ResponseHead?
    @exclusivity(unchecked) var body: [UInt8] = []
    /// Streaming mode (`SessionManager.bytes(for:)`): body chunks go here instead of `body`.
    let bodyStream: BodyStreamBuffer?
    /// `SessionTask.discardsResponseBody`, read once: the body is counted, never kept.
    let discardsBody: Bool
    /// A download task's file writer and what its responses decided (TaskRunner+Downloads.swift).
    let download: DownloadRun?
    /// Reading is paused because the body's consumer is behind: the async stream's reader, or a
    /// download's file writer.
    @exclusivity(unchecked) var pausedForConsumer = false

    // Redirects (TaskRunner+Redirects.swift).
    /// The request of the exchange in flight: the task's own, or where redirects led.
    @exclusivity(unchecked) var currentRequest: Request
    /// `currentRequest` encoded; nil until the task first reaches a pool.
    @exclusivity(unchecked) var prepared: PreparedRequest?
    /// The head in hand is a redirect being followed: its body is not the task's.
    @exclusivity(unchecked) var followingRedirect = false
    /// `redirectBody` and `plannedRedirect`, boxed: most tasks never follow a redirect, and a nil
    /// reference costs their runner's init and deinit nothing, where two optional structs of
    /// non-trivial layout cost generic value-witness calls in both.
    @exclusivity(unchecked) private var redirectState: RedirectState?
    /// That body while the redirect is planned, then drained (TaskRunner+RedirectBodies.swift).
    var redirectBody: RedirectBodyState? {
        get { redirectState?.body }
        set {
            if let redirectState { redirectState.body = newValue } else if newValue != nil { redirectState = RedirectState(body: newValue) }
        }
    }
    /// The plan made while the redirect's body arrived, applied once the body is done with.
    var plannedRedirect: RedirectOutcome? {
        get { redirectState?.planned }
        set {
            if let redirectState { redirectState.planned = newValue } else if newValue != nil { redirectState = RedirectState(planned: newValue) }
        }
    }
    /// The requests sent before `currentRequest` (empty until a redirect), counted against the limit.
    @exclusivity(unchecked) var visited: [RedirectPlanner.Visit] = []
    let redirectLimits: RedirectPlanner.Limits
    /// Decodes a gzip or deflate body (layers too); nil for bodies delivered as received.
    @exclusivity(unchecked) private var contentDecoder: ContentDecoder?
    /// nil when the session does not decode responses.
    private let decodingLimits: ContentDecoder.Limits?

    init(task: SessionTask, engine: SessionEngine, loop: EventLoop, settings: TaskSettings) {
        self.task = task
        self.engine = engine
        self.loop = loop
        self.machine = TaskStateMachine(isReplayable: task.originalRequest.isReplayable)
        self.timeouts = TaskTimeouts(request: task.originalRequest, settings: settings)
        self.bodyStream = task.bodyStream
        self.download = (task as? DownloadTask).map { DownloadRun(task: $0, loop: loop) }
        self.discardsBody = task.discardsResponseBody && task.bodyStream == nil && download == nil
        self.currentRequest = task.originalRequest
        self.redirectLimits = settings.redirectLimits
        self.decodingLimits = settings.decodingLimits
    }

    // MARK: Caller events (arrive through the loop's queue)

    func resume() {
        // The first resume starts the task: enqueue sets the clock and arms (through the pool,
        // or poolAssigned), so only a resume after a suspension has a timer to set here.
        let resumesStartedTask = machine.isSuspended && machine.state != .idle
        perform(machine.resume())
        guard resumesStartedTask, machine.isRunning, !machine.isSuspended else { return }
        // A suspended task is not subject to the inactivity timeout; it starts afresh.
        lastByteAt = LoopTimer.now(loop)
        armTimer()
    }
    func suspend() { perform(machine.suspend()) }
    func cancel() { perform(machine.cancel()) }
    func invalidate(_ code: NetworkingError.Code) { perform(machine.invalidated(code)) }

    // MARK: Acting

    func perform(_ action: TaskStateMachine.Action) {
        switch action {
        case .none:
            break
        case .enqueue(let requireFresh):
            enqueue(requireFresh: requireFresh)
        case .pauseReading:
            connection?.pauseReading()
        case .resumeReading:
            if !pausedForConsumer { connection?.resumeReading() }
        case .succeed:
            finish(error: nil)
        case .planRedirect:
            planRedirect()
        case .fail(let code):
            fail(NetworkingError(code, Self.detail(for: code, request: task.originalRequest)))
        }
    }

    private static func detail(for code: NetworkingError.Code, request: Request) -> String {
        switch code {
        case .cancelled: return "the task was cancelled"
        case .sessionInvalidated: return "the session was invalidated before the task started"
        case .loopShutDown: return "the session's event loop or worker pool has been shut down"
        case .requestTimeout: return "the request timed out"
        case .responseHeadTimeout: return "no response head arrived in time"
        case .idleTimeout: return "no byte arrived for too long while receiving the body"
        default: return "\(code)"
        }
    }

    private func enqueue(requireFresh: Bool) {
        if pool == nil {
            // The request was checked and encoded when the task was made; a bad one ends here,
            // before any socket.
            switch task.prepared {
            case .failure(let error):
                finish(error: error)
                return
            case .success(let prepared):
                self.prepared = prepared
                pool = engine.pool(for: prepared)
            }
            let now = LoopTimer.now(loop)
            requestDeadline = LoopDuration.deadline(now, plus: timeouts.total)
            lastByteAt = now
        }
        metricsFetchStarted()
        // The pool watches the deadline while the task waits; the connection once it has one.
        pool!.enqueue(self, requireFreshConnection: requireFresh)
    }

    /// Moves the task to `prepared`'s pool (a redirect to another origin, or the same one).
    func switchPool(to prepared: PreparedRequest) {
        self.prepared = prepared
        pool = engine.pool(for: prepared)
    }

    /// Fails the task with `error`, giving up its place in the queue or its connection.
    func fail(_ error: NetworkingError) {
        metricsExchangeEnded(on: connection)
        if let connection {
            self.connection = nil
            connection.abort()
        } else if let pool {
            pool.cancel(self)
        }
        var error = error
        error.failingURL = error.failingURL ?? currentRequest.url
        error.response = error.response ?? head?.httpResponse
        finish(error: error)
    }

    /// Closes the connection mid-response without ending the task (a redirect's body not worth
    /// reading).
    func abandonConnection() {
        metricsExchangeEnded(on: connection)
        guard let connection else { return }
        self.connection = nil
        connection.abort()
    }

    private func finish(error: NetworkingError?) {
        connection = nil
        bodyStream?.finish(error: error)
        if let download {
            // The task ends once its file is closed, on a worker (TaskRunner+Downloads.swift).
            closeDownload(download, error: error)
        } else {
            engine.runnerFinished(self, error: error)
        }
    }

    // MARK: Timers

    /// Sets the next deadline on whoever holds the task: its connection while it has one, its
    /// pool while it waits. The holder calls `timerFired`, which re-checks every deadline, so an
    /// early or stale firing is harmless.
    ///
    /// Called only where a deadline may come earlier than the one the timer holds (a connection
    /// assigned: the head timeout starts; a resume: inactivity counts again; a firing): the
    /// holder's timer only ever moves earlier, and a deadline that moved later (a byte, the
    /// request written) is found by the re-check when the timer fires.
    private func armTimer() {
        let deadline = timeouts.nextDeadline(timerMoments, timerPhase)
        guard deadline != .max else { return }
        if let connection {
            connection.armExchangeTimer(at: deadline)
        } else if machine.state == .waitingForConnection {
            pool?.waiterDeadlineChanged(deadline)
        }
    }

    /// The body begins: of the deadlines `armTimer` weighs, only the idle one is new (the head
    /// deadline no longer counts, the total one stays, inactivity only moved later), so only it
    /// can need an earlier firing. Off by default, so most bodies touch nothing here.
    private func armIdleTimer() {
        guard timeouts.idle != .max, machine.state == .receivingBody, !pausedForConsumer, let connection else { return }
        connection.armExchangeTimer(at: LoopDuration.deadline(lastByteAt, plus: timeouts.idle))
    }

    private var timerMoments: TaskTimeouts.Moments {
        TaskTimeouts.Moments(deadline: requestDeadline, headDeadline: headDeadline, lastActivity: lastByteAt)
    }

    private var timerPhase: TaskTimeouts.Phase {
        TaskTimeouts.Phase(state: machine.state, isSuspended: machine.isSuspended, isPausedForConsumer: pausedForConsumer)
    }

    private func timerFired() {
        guard let expiry = timeouts.expiry(at: LoopTimer.now(loop), timerMoments, timerPhase) else {
            armTimer()
            return
        }
        guard case .fail(let code) = machine.timedOut(expiry.code) else { return }
        fail(NetworkingError(code, timeoutDetail(expiry)))
    }

    private func timeoutDetail(_ expiry: TaskTimeouts.Expiry) -> String {
        let request = task.originalRequest
        switch expiry {
        case .total:
            return "the request took longer than its totalTimeoutInterval (\(request.totalTimeoutInterval ?? 0) s)"
        case .inactivity:
            return "no byte was sent or received for \(request.timeoutInterval) s (the request's timeoutInterval)"
        case .responseHead: return Self.detail(for: .responseHeadTimeout, request: request)
        case .idle: return Self.detail(for: .idleTimeout, request: request)
        }
    }
}

extension TaskRunner: PoolRequest {
    var poolRequestID: Int { task.taskIdentifier }
    var poolTask: SessionTask { task }

    func poolAssigned(_ connection: HTTP1Connection) {
        self.connection = connection
        metricsRequestStarted(on: connection)
        headDeadline = LoopDuration.deadline(LoopTimer.now(loop), plus: timeouts.responseHead)
        perform(machine.connectionAssigned())
        armTimer()
        // Last: a write that fails at once reports back (and may retry or finish the task) from
        // inside this call.
        guard let prepared else { return }
        // A streamed body gets a new reader, so a new stream from its factory, on every attempt.
        let body = prepared.streamedBody.map { RequestBodyReader(body: $0, loop: loop, workers: task.manager.workers) }
        connection.execute(prepared.bytes, isHEAD: prepared.isHEAD, body: body, expectsContinue: prepared.expectsContinue, for: self)
    }

    var poolDeadline: UInt64 { timeouts.nextDeadline(timerMoments, timerPhase) }

    func poolDeadlineReached() { timerFired() }

    func poolFailed(_ error: NetworkingError) {
        guard case .fail = machine.connectFailed(error.code) else { return }
        var error = error
        error.failingURL = currentRequest.url
        finish(error: error)
    }
}

extension TaskRunner: HTTP1ExchangeDelegate {
    func exchangeRequestWritten() {
        // A streamed body reported its bytes chunk by chunk (exchangeSentBody).
        if prepared?.streamedBody == nil {
            task.recordSent(Int64(currentRequest.body?.count ?? 0))
            engine.progressChanged(task, upload: true)
        }
        metricsRequestWritten()
        // The head timeout runs from the last request byte.
        lastByteAt = LoopTimer.now(loop)
        headDeadline = LoopDuration.deadline(lastByteAt, plus: timeouts.responseHead)
        perform(machine.requestWritten())
        // No arming: the head and inactivity deadlines only moved later since poolAssigned armed
        // the timer for them (see armTimer).
    }

    func exchangeSentBody(totalBytes: Int64) {
        task.recordSent(totalBytes)
        engine.progressChanged(task, upload: true)
        // While a body streams, the head and inactivity timeouts count from the last chunk
        // written: a slow upload that keeps moving does not time out, one that stalls does.
        lastByteAt = LoopTimer.now(loop)
        headDeadline = LoopDuration.deadline(lastByteAt, plus: timeouts.responseHead)
    }

    func exchangeReceivedHead(_ head: ResponseHead, bodyLength expectedLength: Int64?) {
        self.head = head
        metricsResponseStarted(status: head.status)
        if redirectLimits.maximumRedirects > 0 && isRedirectToFollow(head) {
            // Its body is not the task's: no progress, stream or hooks see it unless the
            // redirect ends up delivered. The plan starts now; the body waits for it.
            followingRedirect = true
            lastByteAt = LoopTimer.now(loop)
            perform(machine.headReceived())
            redirectHeadReceived(bodyLength: expectedLength)
            armTimer()
            return
        }
        acceptFinalHead(head, bodyLength: expectedLength)
    }

    /// A head whose response is the task's: a final response, or a redirect not followed.
    func acceptFinalHead(_ head: ResponseHead, bodyLength expectedLength: Int64?) {
        if let decodingLimits, expectedLength != 0, case .decode(let codings) = ContentDecoder.plan(for: head.headers) {
            contentDecoder = ContentDecoder(codings: codings, limits: decodingLimits)
        }
        var expectedLength = expectedLength
        if let download {
            switch downloadReceivedHead(head, download: download, bodyLength: expectedLength, decoded: contentDecoder != nil) {
            case .write(let total):
                expectedLength = total
            case .restart:
                // Like a redirect: the body is not the task's; its end plans the next request.
                contentDecoder = nil
                followingRedirect = true
                lastByteAt = LoopTimer.now(loop)
                perform(machine.headReceived())
                restartHeadReceived(bodyLength: expectedLength)
                armTimer()
                return
            case .failed:
                return
            }
        }
        if let bodyStream {
            bodyStream.receivedHead(head)
        } else if download == nil, !discardsBody, let expectedLength, expectedLength > 64 * 1024 {
            // Large bodies grow in place once; small ones adopt the decoder's first chunk instead.
            body.reserveCapacity(Int(min(expectedLength, 1 << 26)))
        }
        task.recordResponse(head, expectedLength: expectedLength)
        lastByteAt = LoopTimer.now(loop)
        perform(machine.headReceived())
        armIdleTimer()
        hookResponseReceived(head)
    }

    func exchangeReceivedBody(_ received: [UInt8]) {
        if followingRedirect {
            lastByteAt = LoopTimer.now(loop)
            redirectBodyReceived(received)
            return
        }
        var bytes = received
        if let contentDecoder {
            do {
                bytes = try contentDecoder.decode(received)
            } catch {
                contentDecodingFailed(error)
                return
            }
        }
        if let download {
            downloadReceived(bytes, wireCount: received.count, download: download)
            lastByteAt = LoopTimer.now(loop)
            return
        }
        if let bodyStream {
            if !bytes.isEmpty && bodyStream.push(bytes) && !pausedForConsumer {
                pausedForConsumer = true
                connection?.pauseReading()
            }
        } else if discardsBody {
            task.recordDiscarded(bytes.count)
        } else if body.capacity == 0 {
            body = bytes
        } else {
            body.append(contentsOf: bytes)
        }
        // Progress counts what came off the wire, so it reaches its Content-Length.
        task.recordReceived(received.count)
        engine.progressChanged(task, upload: false)
        lastByteAt = LoopTimer.now(loop)
        if !bytes.isEmpty { hookBodyReceived(bytes) }
    }

    /// The body could not be decoded: the task fails, and the connection (mid-body) is closed.
    private func contentDecodingFailed(_ failure: ContentDecoder.Failure) {
        contentDecoder = nil
        let error: NetworkingError
        switch failure {
        case .corrupt(let why): error = NetworkingError(.contentDecodingFailed, why)
        case .limitExceeded(let why): error = NetworkingError(.decompressionLimitExceeded, why)
        }
        guard case .fail = machine.exchangeFailed(error.code, onReusedConnection: false, responseStarted: true) else { return }
        fail(error)
    }

    func exchangeTimerFired() { timerFired() }

    func exchangeFinished() {
        metricsExchangeEnded(on: connection)
        if followingRedirect && redirectBodyEndHeld() { connection = nil; return }
        responseEnded()
    }

    /// The response's body is complete (now, or when a redirect's plan delivered it).
    func responseEnded() {
        if let contentDecoder {
            self.contentDecoder = nil
            do {
                try contentDecoder.finish()
            } catch {
                connection = nil
                contentDecodingFailed(error)
                return
            }
        }
        if hookHoldsEnd() { connection = nil; return }
        connection = nil
        perform(machine.responseEnded(isRedirectToFollow: followingRedirect))
    }

    func exchangeFailed(_ error: NetworkingError, onReusedConnection: Bool, responseStarted: Bool) {
        metricsExchangeEnded(on: connection)
        connection = nil
        if followingRedirect && redirectBodyCutShort() { return }
        let action = machine.exchangeFailed(error.code, onReusedConnection: onReusedConnection, responseStarted: responseStarted)
        switch action {
        case .enqueue:
            head = nil
            body.removeAll()
            if discardsBody { task.recordDiscarded(nil) }
            followingRedirect = false
            redirectBody = nil
            plannedRedirect = nil
            perform(action)
        case .fail:
            var error = error
            error.failingURL = currentRequest.url
            error.response = head?.httpResponse
            finish(error: error)
        default:
            perform(action)
        }
    }
}

// MARK: Streaming body

extension TaskRunner {
    /// The body's consumer (an async stream's reader, a download's file writer) drained its
    /// buffer: read again, unless it filled up again since it asked, or the caller suspended the
    /// task.
    func consumerDrained() {
        // A redirect being planned is not the consumer's to resume.
        guard pausedForConsumer, redirectBody?.phase != .planning else { return }
        if let bodyStream, bodyStream.isProducerPaused { return }
        if let download, download.writer.wantsPause { return }
        pausedForConsumer = false
        lastByteAt = LoopTimer.now(loop)
        if !machine.isSuspended { connection?.resumeReading() }
        armTimer()
    }
}

/// The box behind `TaskRunner.redirectBody` and `plannedRedirect`, made at a task's first
/// redirect. Loop-confined, like its runner.
private final class RedirectState {
    var body: RedirectBodyState?
    var planned: RedirectOutcome?

    init(body: RedirectBodyState? = nil, planned: RedirectOutcome? = nil) {
        self.body = body
        self.planned = planned
    }
}
