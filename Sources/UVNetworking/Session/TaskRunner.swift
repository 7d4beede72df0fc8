import Foundation
import HTTPTypes

/// The loop-side half of a task: owns its state machine, its timer and its response while it
/// runs, and performs what the machine decides. Loop-confined.
final class TaskRunner {
    let task: SessionTask
    private unowned let engine: SessionEngine
    private let loop: EventLoop
    private var machine: TaskStateMachine
    private var timer: LoopTimer?
    private var pool: ConnectionPool?
    private var connection: HTTP1Connection?
    private var encodedRequest: [UInt8] = []
    private var isHEAD = false

    private var requestDeadline: UInt64 = .max
    private var headDeadline: UInt64 = .max
    private var lastByteAt: UInt64 = 0
    private let headTimeout: UInt64
    private let idleTimeout: UInt64

    private(set) var response: HTTPResponse?
    private(set) var body: [UInt8] = []
    private var onReusedConnection = false

    init(task: SessionTask, engine: SessionEngine, loop: EventLoop, configuration: SessionConfiguration) {
        self.task = task
        self.engine = engine
        self.loop = loop
        self.machine = TaskStateMachine(isReplayable: task.originalRequest.isReplayable)
        self.headTimeout = Self.milliseconds(configuration.responseHeadTimeout)
        self.idleTimeout = Self.milliseconds(configuration.idleTimeout)
    }

    private static func milliseconds(_ seconds: TimeInterval) -> UInt64 {
        seconds.isFinite && seconds > 0 ? UInt64(seconds * 1000) : .max
    }

    var state: TaskStateMachine.State { machine.state }

    // MARK: Caller events (arrive through the loop's queue)

    func resume() { perform(machine.resume()) }
    func suspend() { perform(machine.suspend()) }
    func cancel() { perform(machine.cancel()) }
    func invalidate(_ code: NetworkingError.Code) { perform(machine.invalidated(code)) }

    // MARK: Acting

    private func perform(_ action: TaskStateMachine.Action) {
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
            finish(error: nil)
        case .fail(let code):
            fail(NetworkingError(code, Self.detail(for: code, request: task.originalRequest)))
        }
    }

    private static func detail(for code: NetworkingError.Code, request: Request) -> String {
        switch code {
        case .cancelled: return "the task was cancelled"
        case .sessionInvalidated: return "the session was invalidated before the task started"
        case .requestTimeout: return "the request took longer than its timeoutInterval (\(request.timeoutInterval) s)"
        case .responseHeadTimeout: return "no response head arrived in time"
        case .idleTimeout: return "no byte arrived for too long while receiving the body"
        default: return "\(code)"
        }
    }

    private func enqueue(requireFresh: Bool) {
        if pool == nil {
            // First start: validate and encode once; a bad request never reaches a socket.
            do {
                let prepared = try engine.prepare(task.originalRequest)
                encodedRequest = prepared.bytes
                isHEAD = task.originalRequest.method == .head
                pool = prepared.pool
            } catch {
                finish(error: error)
                return
            }
            requestDeadline = LoopTimer.now(loop) + Self.milliseconds(task.originalRequest.timeoutInterval)
            armTimer()
        }
        pool!.enqueue(self, requireFreshConnection: requireFresh)
    }

    /// Fails the task with `error`, giving up its place in the queue or its connection.
    private func fail(_ error: NetworkingError) {
        if let connection {
            self.connection = nil
            connection.abort()
        } else if let pool {
            pool.cancel(self)
        }
        var error = error
        error.failingURL = task.originalRequest.url
        error.response = error.response ?? response
        finish(error: error)
    }

    private func finish(error: NetworkingError?) {
        timer?.close()
        timer = nil
        connection = nil
        engine.runnerFinished(self, error: error)
    }

    // MARK: Timers

    private func armTimer() {
        let deadline: UInt64
        switch machine.state {
        case .sending, .awaitingHead: deadline = min(requestDeadline, headDeadline)
        case .receivingBody: deadline = min(requestDeadline, idleTimeout == .max ? .max : lastByteAt &+ idleTimeout)
        default: deadline = requestDeadline
        }
        guard deadline != .max else { timer?.disarm(); return }
        if timer == nil { timer = LoopTimer(loop: loop) { [unowned self] in self.timerFired() } }
        timer!.arm(at: deadline)
    }

    private func timerFired() {
        let now = LoopTimer.now(loop)
        if now >= requestDeadline {
            perform(machine.timedOut(.requestTimeout))
        } else if (machine.state == .awaitingHead || machine.state == .sending) && now >= headDeadline {
            perform(machine.timedOut(.responseHeadTimeout))
        } else if machine.state == .receivingBody && idleTimeout != .max && now >= lastByteAt &+ idleTimeout {
            perform(machine.timedOut(.idleTimeout))
        } else {
            armTimer()
        }
    }
}

extension TaskRunner: PoolRequest {
    var poolRequestID: Int { task.taskIdentifier }

    func poolAssigned(_ connection: HTTP1Connection) {
        self.connection = connection
        onReusedConnection = connection.isReused
        headDeadline = headTimeout == .max ? .max : LoopTimer.now(loop) &+ headTimeout
        let action = machine.connectionAssigned()
        connection.execute(encodedRequest, isHEAD: isHEAD, for: self)
        perform(action)
        armTimer()
    }

    func poolFailed(_ error: NetworkingError) {
        guard case .fail = machine.connectFailed(error.code) else { return }
        var error = error
        error.failingURL = task.originalRequest.url
        finish(error: error)
    }
}

extension TaskRunner: HTTP1ExchangeDelegate {
    func exchangeRequestWritten() {
        task.recordSent(Int64(task.originalRequest.body?.count ?? 0))
        engine.progressChanged(task, upload: true)
        // The head timeout runs from the last request byte.
        if headTimeout != .max { headDeadline = LoopTimer.now(loop) &+ headTimeout }
        perform(machine.requestWritten())
        armTimer()
    }

    func exchangeReceivedHead(_ head: ResponseHead) {
        var fields = HTTPFields()
        fields.reserveCapacity(head.headers.count)
        var expectedLength: Int64?
        for field in head.headers {
            guard let name = HTTPField.Name(field.name) else { continue }
            fields.append(HTTPField(name: name, value: field.value))
            if name == .contentLength { expectedLength = Int64(field.value) }
        }
        if isHEAD || head.status == 204 || head.status == 304 { expectedLength = 0 }
        let response = HTTPResponse(status: .init(code: head.status, reasonPhrase: head.reason), headerFields: fields)
        self.response = response
        // Large bodies grow in place once; small ones adopt the decoder's first chunk instead.
        if let expectedLength, expectedLength > 64 * 1024 { body.reserveCapacity(Int(min(expectedLength, 1 << 26))) }
        task.recordResponse(response, expectedLength: expectedLength)
        lastByteAt = LoopTimer.now(loop)
        perform(machine.headReceived())
        armTimer()
    }

    func exchangeReceivedBody(_ bytes: [UInt8]) {
        if body.capacity == 0 { body = bytes } else { body.append(contentsOf: bytes) }
        task.recordReceived(bytes.count)
        engine.progressChanged(task, upload: false)
        lastByteAt = LoopTimer.now(loop)
    }

    func exchangeFinished() {
        connection = nil
        perform(machine.responseEnded())
    }

    func exchangeFailed(_ error: NetworkingError, onReusedConnection: Bool, responseStarted: Bool) {
        connection = nil
        let action = machine.exchangeFailed(error.code, onReusedConnection: onReusedConnection, responseStarted: responseStarted)
        switch action {
        case .enqueue:
            response = nil
            body.removeAll()
            perform(action)
        case .fail:
            var error = error
            error.failingURL = task.originalRequest.url
            error.response = response
            finish(error: error)
        default:
            perform(action)
        }
    }
}
