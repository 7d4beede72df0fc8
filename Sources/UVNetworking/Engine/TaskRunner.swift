import Foundation
import HTTPTypes
import UVHTTP1

/// The loop-side half of a task: owns its state machine, its deadlines and its response while it
/// runs, and performs what the machine decides. Loop-confined.
///
/// Stored properties opt out of runtime exclusivity checks: only the loop thread touches them,
/// and the state machines rule out re-entrant mutation. The checks cost more per request than
/// the work they guard.
final class TaskRunner {
    let task: SessionTask
    /// Strong: the engine holds no runner (its task does), so this makes no cycle, and the task
    /// holds it through its runner while it runs (`loopEngine`). An unowned reference would cost an
    /// unowned retain and release per runner and a checked load at each of the several uses per
    /// request.
    let engine: SessionEngine
    /// The engine's: a reference of the runner's own would be one more to take and drop per task.
    var loop: EventLoop { engine.loop }
    @exclusivity(unchecked) var machine: TaskStateMachine
    @exclusivity(unchecked) private var pool: ConnectionPool?
    @exclusivity(unchecked) private(set) var connection: Exchange?
    /// Set only when the manager has hooks (see TaskRunner+Hooks.swift).
    @exclusivity(unchecked) var hookState: TaskHookState?
    /// Set only when the task logs or is measured (Observability/TaskRunner+Observation.swift).
    @exclusivity(unchecked) var observation: TaskObservation?

    /// The request's and the session's timeouts (TaskTimeouts decides with them).
    private let timeouts: TaskTimeouts
    /// When the whole request must be over (`Request.totalTimeoutInterval`); .max for never.
    @exclusivity(unchecked) private(set) var requestDeadline: UInt64 = .max
    @exclusivity(unchecked) private var headDeadline: UInt64 = .max
    /// The last byte sent or received (or the start, or a resume): what the inactivity and idle
    /// timeouts count from. One store per read or write; the timer is not touched.
    @exclusivity(unchecked) var lastByteAt: UInt64 = 0

    /// The final response head, once it arrived; turned into an HTTPResponse off the loop.
    @exclusivity(unchecked) var head: ResponseHead?
    /// Where the task's response body goes (memory, stream, file, counted and dropped), chosen
    /// here once.
    @exclusivity(unchecked) var sink: any ResponseSink
    /// A download task's file writer and what its responses decided (TaskRunner+Downloads.swift);
    /// also the task's sink.
    let download: DownloadRun?

    // Redirects (TaskRunner+Redirects.swift).
    /// The request of the exchange in flight: the task's own, or where redirects led.
    var currentRequest: Request { redirected?.request ?? task.sentRequest }
    /// Where redirects (or a download's restart) led, and the requests sent before it; nil while
    /// the request is the task's own, so that most runners keep no copy of it (a copy and a
    /// destroy per task) and no list of visits (an empty array is still one release per task).
    /// Boxed: a nil reference costs nothing to make, test and destroy, an optional request does.
    @exclusivity(unchecked) private var redirected: RedirectedRequest?

    final class RedirectedRequest {
        let request: Request
        /// `request` encoded.
        let prepared: PreparedRequest
        let visited: [RedirectPlanner.Visit]
        init(_ request: Request, prepared: PreparedRequest, visited: [RedirectPlanner.Visit]) {
            self.request = request
            self.prepared = prepared
            self.visited = visited
        }
    }

    /// The requests sent before `currentRequest` (empty until a redirect), counted against the limit.
    var visited: [RedirectPlanner.Visit] { redirected?.visited ?? [] }

    /// `request` (encoded: `prepared`) is sent next, after `currentRequest` (a redirect followed,
    /// a download restarted), on `prepared`'s pool (another origin's, or the same).
    func moveOn(to request: Request, prepared: PreparedRequest) {
        let visit = RedirectPlanner.Visit(method: currentRequest.method, url: currentRequest.url.absoluteString)
        redirected = RedirectedRequest(request, prepared: prepared, visited: visited + [visit])
        pool = engine.pool(for: prepared)
    }
    /// The task's own request goes out as `prepared` (the same request with fields added: a
    /// cache's validators), with no redirect counted.
    func sendInstead(_ prepared: PreparedRequest) {
        redirected = RedirectedRequest(task.sentRequest, prepared: prepared, visited: [])
    }
    /// `currentRequest` encoded (nil when the task's own request could not be). Read where it is
    /// kept, not held by the runner: a reference of its own would be one more to take and drop per
    /// task.
    var prepared: PreparedRequest? { redirected?.prepared ?? task.preparedRequest }
    /// The body of a redirect (or restart) in hand and the plan made while it arrived, boxed:
    /// most tasks never follow a redirect, and a nil reference costs their runner's init and
    /// deinit nothing (TaskRunner+RedirectBodies.swift).
    @exclusivity(unchecked) var redirectBody: RedirectBody?
    let redirectLimits: RedirectPlanner.Limits
    /// Decodes a gzip or deflate body (layers too); nil for bodies delivered as received.
    @exclusivity(unchecked) private(set) var contentDecoder: ContentDecoder?
    /// nil when the session does not decode responses.
    private let decodingLimits: ContentDecoder.Limits?
    /// The attempts made after the first, and the wait for the next; nil until the session's
    /// retrier first asks for one, so that most runners make and keep nothing for it
    /// (TaskRunner+Retries.swift).
    @exclusivity(unchecked) var retries: RetryWait?

    init(task: SessionTask, engine: SessionEngine, settings: TaskSettings) {
        self.machine = TaskStateMachine(isReplayable: task.preparedRequest?.isReplayable ?? task.originalRequest.isReplayable)
        self.timeouts = TaskTimeouts(request: task.originalRequest, settings: settings)
        let download = task.isDownload
            ? DownloadRun(task: unsafeDowncast(task, to: DownloadTask.self), loop: engine.loop) : nil
        self.download = download
        if let download {
            sink = download
        } else if let stream = task.bodyStream {
            sink = StreamSink(buffer: stream)
        } else if task.discardsResponseBody {
            sink = DiscardSink()
        } else {
            sink = BufferSink()
        }
        self.redirectLimits = settings.redirectLimits
        self.decodingLimits = settings.decodingLimits
        // Last: the arguments are the caller's (+1) references, moved into the fields when
        // nothing reads them afterwards; a read after the store costs a retain and a release.
        self.task = task
        self.engine = engine
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

    /// `perform`, with the common "nothing to do" decided here, without a call: for events
    /// that mostly only move the machine (a connection assigned, the request written).
    @inline(__always)
    private func performIfAny(_ action: TaskStateMachine.Action) {
        if case .none = action { return }
        perform(action)
    }

    func perform(_ action: TaskStateMachine.Action) {
        switch action {
        case .none:
            break
        case .enqueue(let requireFresh):
            enqueue(requireFresh: requireFresh)
        case .pauseReading:
            connection?.pauseReading()
        case .resumeReading:
            connection?.resumeReading()
        case .succeed:
            end(error: nil)
        case .startRedirectPlan:
            connection?.pauseReading()
            startRedirectPlan()
        case .planRedirect:
            planRedirect()
        case .planRestart:
            if retries?.isPending == true {
                waitForRetry()
            } else if let download {
                planDownloadRestart(download)
            }
        case .consumerResumed(let read):
            // The silence was ours: inactivity counts from now.
            lastByteAt = LoopTimer.now(loop)
            if read { connection?.resumeReading() }
            armTimer()
        case .releaseConnection:
            // Back in its pool, the connection reads while idle, to notice a close.
            connection?.resumeReading()
            connection = nil
        case .drainRedirectBody(let read):
            redirectBodyDraining()
            perform(.consumerResumed(read: read))
        case .abandonRedirectBody:
            abandonConnection()
            perform(machine.redirectBodyAbandoned())
        case .deliverRedirectResponse(let ended):
            redirectDeclined(ended: ended)
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
            guard let prepared = task.preparedRequest else {
                if case .failure(let error) = task.prepared { finish(error: error) }
                return
            }
            // A task the cache answered has started already when its retrier sends it again:
            // that attempt goes to the network, under the deadline the start set.
            if let cacheState = task.cacheState, cacheState.answeredFromStore {
                cacheRetryLoads(cacheState)
            } else {
                let now = LoopTimer.now(loop)
                requestDeadline = LoopDuration.deadline(now, plus: timeouts.total)
                lastByteAt = now
                observeStart(prepared)
                // A session with a cache: the lookup decided before the task reached the loop.
                if let cacheState = task.cacheState {
                    switch cacheStart(cacheState) {
                    case .network:
                        break
                    case .served(let stored):
                        metricsFetchStarted()
                        poolAssigned(stored)
                        return
                    case .unavailable(var error):
                        guard case .fail = machine.connectFailed(error.code) else { return }
                        error.failingURL = currentRequest.url
                        finish(error: error)
                        return
                    }
                }
            }
            pool = engine.pool(for: prepared)
        }
        metricsFetchStarted()
        // The pool watches the deadline while the task waits; the connection once it has one.
        pool!.enqueue(self, requireFreshConnection: requireFresh)
        if observation != nil && connection == nil && machine.state == .waitingForConnection { observeQueued() }
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
        // A failure the session's retrier answers with another attempt does not end the task.
        // Tested without binding: a success must not pay for copying the optional error.
        if error != nil && engine.retrier != nil && retriedAfterFailure(error) { return }
        end(error: error)
    }

    /// The task is over: no retry is asked for. Inlined, so that a success (`.succeed`, `nil`
    /// known) tests no error at all.
    @inline(__always)
    private func end(error: NetworkingError?) {
        connection = nil
        if retries != nil { retries!.close() }
        if let cacheState = task.cacheState { cacheTaskEnded(error, cacheState) }
        // A download's task ends once its file is closed, on a worker (TaskRunner+Downloads.swift).
        if sink.taskEnded(error, runner: self) { engine.runnerFinished(self, error: error) }
    }

    /// The exchange in hand ended but the response goes on in `next` (a 304's stored body,
    /// TaskRunner+Cache.swift): the connection goes back to its pool reading while idle, as a
    /// released one does.
    func continueResponse(on next: Exchange) {
        connection?.resumeReading()
        connection = next
    }

    /// The exchange in hand is over and another attempt follows: nothing of its response is
    /// left, and inactivity counts from now (the wait was ours). `bodyDelivered`: the task's
    /// sink took some of it, and forgets it.
    func resetForNextAttempt(bodyDelivered: Bool) {
        head = nil
        contentDecoder = nil
        redirectBody = nil
        if bodyDelivered {
            sink.exchangeRestarted(task: task)
            task.recordResumedBytes(0)
        }
        lastByteAt = LoopTimer.now(loop)
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
    func armTimer() {
        if let connection {
            armTimer(on: connection)
        } else if machine.state == .waitingForConnection {
            let deadline = timeouts.nextDeadline(timerMoments, timerPhase)
            guard deadline != .max else { return }
            pool?.waiterDeadlineChanged(deadline)
        }
    }

    /// `armTimer()` for the task's connection.
    private func armTimer(on connection: Exchange) {
        let deadline = timeouts.nextDeadline(timerMoments, timerPhase)
        guard deadline != .max else { return }
        connection.armExchangeTimer(at: deadline)
    }

    /// The body begins: of the deadlines `armTimer` weighs, only the idle one is new (the head
    /// deadline no longer counts, the total one stays, inactivity only moved later), so only it
    /// can need an earlier firing. Off by default, so most bodies touch nothing here.
    private func armIdleTimer() {
        guard timeouts.idle != .max, machine.state == .receivingBody, !machine.isPausedForConsumer, let connection else { return }
        connection.armExchangeTimer(at: LoopDuration.deadline(lastByteAt, plus: timeouts.idle))
    }

    private var timerMoments: TaskTimeouts.Moments {
        TaskTimeouts.Moments(deadline: requestDeadline, headDeadline: headDeadline, lastActivity: lastByteAt)
    }

    private var timerPhase: TaskTimeouts.Phase {
        TaskTimeouts.Phase(state: machine.state, isSuspended: machine.isSuspended, isPausedForConsumer: machine.isPausedForConsumer)
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

    func poolAssigned(_ connection: Exchange) {
        self.connection = connection
        metricsRequestStarted(on: connection)
        if observation != nil { observeAssigned(connection) }
        headDeadline = LoopDuration.deadline(LoopTimer.now(loop), plus: timeouts.responseHead)
        performIfAny(machine.connectionAssigned())
        // On the connection in hand: `armTimer()` would load (and retain) the stored one.
        armTimer(on: connection)
        // Last: a write that fails at once reports back (and may retry or finish the task) from
        // inside this call.
        guard let prepared else { return }
        // A streamed body gets a new reader, so a new stream from its factory, on every attempt.
        let body = prepared.streamedBody.map { RequestBodyReader(body: $0, loop: loop, workers: task.manager.workers) }
        // A captured request's exchange is recorded from its first byte (redirects and replays
        // each get their own).
        // A stored response crossed no wire (the cache's exchange has no connection number).
        if let capture = task.originalRequest.wireCapture, connection.connectionID >= 0 {
            connection.record(with: capture.begin(url: currentRequest.url, remoteAddress: connection.remoteAddressText,
                                                  protocolName: connection.protocolName))
        }
        connection.execute(prepared.bytes, isHEAD: prepared.isHEAD, body: body, expectsContinue: prepared.expectsContinue, for: self)
    }

    var poolDeadline: UInt64 { timeouts.nextDeadline(timerMoments, timerPhase) }

    var poolMayPipeline: Bool { prepared?.mayPipeline ?? false }

    func poolDeadlineReached() { timerFired() }

    func poolFailed(_ failure: ExchangeError) {
        var error = NetworkingError(failure)
        guard case .fail = machine.connectFailed(error.code) else { return }
        error.failingURL = currentRequest.url
        finish(error: error)
    }
}

extension TaskRunner: ExchangeDelegate {
    func exchangeRequestWritten() {
        // A streamed body reported its bytes chunk by chunk (exchangeSentBody).
        if prepared?.streamedBody == nil {
            // Read in place: `currentRequest` would copy the whole request.
            let sent = redirected == nil ? task.originalRequest.body?.count : redirected?.request.body?.count
            task.recordSent(Int64(sent ?? 0))
            engine.progressChanged(task, upload: true)
        }
        metricsRequestWritten()
        // The head timeout runs from the last request byte.
        lastByteAt = LoopTimer.now(loop)
        headDeadline = LoopDuration.deadline(lastByteAt, plus: timeouts.responseHead)
        performIfAny(machine.requestWritten())
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
        if let cacheState = task.cacheState, cacheReceivedHead(head, cacheState) { return }
        if redirectLimits.maximumRedirects > 0 && isRedirectToFollow(head) {
            // Its body is not the task's: no progress, stream or hooks see it unless the
            // redirect ends up delivered. The plan starts now; the body waits for it.
            redirectHeadReceived(bodyLength: expectedLength)
            return
        }
        // An error status may be one the session's retrier tries again: its body is dropped,
        // like a redirect's, and reaches neither the sink nor the hooks.
        if head.status >= 400, let retrier = engine.retrier, retryAfterStatus(head, bodyLength: expectedLength, retrier) {
            return
        }
        acceptFinalHead(head, bodyLength: expectedLength)
    }

    /// A head whose response is the task's: a final response, or a redirect not followed.
    func acceptFinalHead(_ head: ResponseHead, bodyLength: Int64?) {
        // A 206's body is a range of the encoded representation when it has a coding (RFC 9110
        // §14.1.2): a slice no decoder can start in the middle of. Delivered as received, with
        // its Content-Encoding and Content-Range, for the caller to join with the other ranges.
        if let decodingLimits, bodyLength != 0, head.status != 206, head.hasContentEncoding,
           case .decode(let codings) = ContentDecoder.plan(for: head.headers) {
            contentDecoder = ContentDecoder(codings: codings, limits: decodingLimits)
        }
        let expectedLength: Int64?
        switch sink.receivedHead(head, bodyLength: bodyLength, runner: self) {
        case .accept(let length):
            expectedLength = length
        case .restart:
            // Like a redirect: the body is not the task's; its end plans the next request.
            contentDecoder = nil
            restartHeadReceived(bodyLength: bodyLength)
            return
        case .fail(let error):
            guard case .fail = machine.exchangeFailed(error.code, onReusedConnection: false, responseStarted: true) else { return }
            fail(error)
            return
        }
        task.recordResponse(head, expectedLength: expectedLength)
        if let cacheState = task.cacheState { cacheAcceptedHead(head, cacheState) }
        lastByteAt = LoopTimer.now(loop)
        perform(machine.headReceived())
        armIdleTimer()
        hookResponseReceived(head)
    }

    func exchangeReceivedBody(_ received: UnsafeRawBufferPointer) {
        guard machine.destination == .task else {
            lastByteAt = LoopTimer.now(loop)
            redirectBodyReceived(received)
            return
        }
        guard let contentDecoder else {
            deliverBody(received, wireCount: received.count)
            return
        }
        let decoded: [UInt8]
        do {
            decoded = try contentDecoder.decode(received)
        } catch {
            contentDecodingFailed(error)
            return
        }
        decoded.withUnsafeBytes { deliverBody($0, wireCount: received.count) }
    }

    /// Body bytes of the task's response, decoded, to its sink.
    func deliverBody(_ bytes: UnsafeRawBufferPointer, wireCount: Int) {
        switch sink.receive(bytes, task: task) {
        case .taken:
            break
        case .behind:
            perform(machine.consumerBehind())
        case .dropped:
            lastByteAt = LoopTimer.now(loop)
            return
        }
        if let cacheState = task.cacheState, cacheReceivedBody(bytes, cacheState) { perform(machine.consumerBehind()) }
        // Progress counts what came off the wire, so it reaches its Content-Length.
        task.recordReceived(wireCount)
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
        if task.cacheState != nil, cacheExchangeFinished() { return }
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
        let action = machine.responseEnded()
        if action != .releaseConnection { connection = nil }
        perform(action)
    }

    func exchangeFailed(_ failure: ExchangeError, context: ExchangeFailureContext) {
        let error = NetworkingError(failure)
        metricsExchangeEnded(on: connection)
        connection = nil
        let action = machine.exchangeFailed(error.code, context: context)
        switch action {
        case .enqueue:
            traceResent(after: error.code)
            observeRetry(after: error)
            head = nil
            sink.exchangeRestarted(task: task)
            redirectBody = nil
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

// MARK: The body's consumer

extension TaskRunner {
    /// The body's consumer (an async stream's reader, a download's file writer) drained its
    /// buffer: read again, unless it filled up again since it asked, or the caller suspended the
    /// task.
    func consumerDrained() {
        perform(machine.consumerDrained(stillBehind: sink.isBehind || cacheIsBehind))
    }
}

/// What a task runner needs of its session's configuration, read once when the engine is made:
/// the session's timeouts in loop milliseconds, the redirect rules and the decoding limits. A
/// runner copies these few words instead of the whole `SessionConfiguration` (strings, arrays,
/// a proxy setting), which would cost retains and releases for every task.
struct TaskSettings: Sendable {
    /// `SessionConfiguration.responseHeadTimeout`, in loop milliseconds (`.max` for none).
    let responseHeadTimeout: UInt64
    /// `SessionConfiguration.idleTimeout`, in loop milliseconds (`.max` for none).
    let idleTimeout: UInt64
    let redirectLimits: RedirectPlanner.Limits
    /// nil when the session does not decode responses.
    let decodingLimits: ContentDecoder.Limits?
    init(configuration: SessionConfiguration) {
        responseHeadTimeout = LoopDuration.timeout(configuration.responseHeadTimeout)
        idleTimeout = LoopDuration.timeout(configuration.idleTimeout)
        redirectLimits = RedirectPlanner.Limits(maximumRedirects: configuration.maximumRedirects,
                                                allowsHTTPSToHTTP: configuration.allowsHTTPSToHTTPRedirects)
        decodingLimits = configuration.decompressesResponses
            ? ContentDecoder.Limits(maximumBytes: configuration.maximumResponseBodyBytes,
                                    maximumRatio: configuration.maximumDecompressionRatio)
            : nil
    }
}
