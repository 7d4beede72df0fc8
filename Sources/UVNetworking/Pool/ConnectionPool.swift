import DequeModule

/// Someone waiting for a connection from a pool: a task runner. Loop thread only.
protocol PoolRequest: AnyObject {
    /// The pool's number for this request (the task identifier).
    var poolRequestID: Int { get }
    /// The task that wants the connection (the one a TLS trust challenge is raised for).
    var poolTask: SessionTask { get }
    /// A connection is ready for the request; run it.
    func poolAssigned(_ connection: HTTP1Connection)
    /// No connection could be opened for the request.
    func poolFailed(_ error: HTTP1Error)
    /// When the request gives up waiting (loop milliseconds).
    var poolDeadline: UInt64 { get }
    /// `poolDeadline` passed while the request was still waiting.
    func poolDeadlineReached()
}

/// The I/O shell of one origin's keep-alive pool: maps the state machine's numbers to
/// connections (in the machine's slots) and waiting requests (in arrival order), and performs its
/// actions. Loop-confined.
///
/// Stored properties opt out of runtime exclusivity checks: only the loop thread touches them,
/// and the state machines rule out re-entrant mutation. The checks cost more per request than
/// the work they guard.
final class ConnectionPool {
    struct Settings {
        var maximumConnections: Int
        var idleTimeout: Double
        var connectTimeout: Double
        var decoderLimits: ResponseDecoder.Limits
    }

    let host: String
    let port: Int
    /// For an https origin: what its connections need for TLS. Set once, right after init.
    var tls: TLSRoute?
    /// For an https origin behind a proxy: the CONNECT tunnel. Set once, right after init.
    var tunnel: TunnelRoute?
    /// For a session with a per-origin rate or delay: who says when a request may start
    /// (PoolPacing.swift). Set once, right after init; nil costs a request one check.
    @exclusivity(unchecked) var pacing: PoolPacing?
    private let loop: EventLoop
    private let resolver: DNSResolver
    private let settings: Settings
    @exclusivity(unchecked) private var machine: ConnectionPoolStateMachine
    /// Indexed by `machine.slot(of:)`; a slot may still hold a connection the machine has
    /// replaced and that is closing, so lookups check the number.
    @exclusivity(unchecked) private var connections: [HTTP1Connection?] = []
    /// In arrival order, which is mostly the order they are served in.
    @exclusivity(unchecked) private var waiting = Deque<PoolRequest>()
    /// Fires at the earliest deadline among waiting requests; one per pool, made when first
    /// needed and closed when the pool drains.
    @exclusivity(unchecked) private var waiterTimer: LoopTimer?
    @exclusivity(unchecked) private var waiterTimerDeadline: UInt64 = .max

    init(host: String, port: Int, loop: EventLoop, resolver: DNSResolver, settings: Settings) {
        self.host = host
        self.port = port
        self.loop = loop
        self.resolver = resolver
        self.settings = settings
        self.machine = ConnectionPoolStateMachine(maximumConnections: settings.maximumConnections)
    }

    /// Open or opening connections.
    var connectionCount: Int { machine.connectionCount }

    /// The longest-waiting request's task: a new connection is opened on behalf of the queue,
    /// and the head of the queue is who a TLS trust challenge is asked about.
    var oldestWaitingTask: SessionTask? {
        waiting.min { $0.poolRequestID < $1.poolRequestID }?.poolTask
    }

    /// The connection numbered `id`, if it is still in its slot.
    private func connection(_ id: Int) -> HTTP1Connection? {
        let slot = machine.slot(of: id)
        guard slot >= 0, slot < connections.count, let connection = connections[slot], connection.id == id else { return nil }
        return connection
    }

    /// Empties `connection`'s slot unless another connection took it meanwhile.
    private func forget(_ connection: HTTP1Connection) {
        let slot = machine.slot(of: connection.id)
        if slot >= 0, slot < connections.count, connections[slot] === connection { connections[slot] = nil }
    }

    /// Takes the waiting request numbered `id` out of the queue.
    private func takeWaiting(_ id: Int) -> PoolRequest? {
        guard let index = waiting.firstIndex(where: { $0.poolRequestID == id }) else { return nil }
        return waiting.remove(at: index)
    }

    /// Queues `request`; it gets `poolAssigned` or `poolFailed` later (or at once, on an idle
    /// connection).
    func enqueue(_ request: PoolRequest, requireFreshConnection: Bool) {
        loop.assertInLoop()
        // A retry after a stale keep-alive failure is the same request again, already paced.
        if let pacing, !requireFreshConnection { return enqueuePaced(request, pacing) }
        let id = request.poolRequestID
        let action = machine.requestArrived(id, requireFresh: requireFreshConnection)
        if case .execute(id, let connectionID) = action, let connection = connection(connectionID) {
            // The common case with keep-alive: an idle connection at once, no bookkeeping.
            request.poolAssigned(connection)
            return
        }
        waiting.append(request)
        waiterDeadlineChanged(request.poolDeadline)
        perform(action)
    }

    /// A waiting request's deadline moved (or it just arrived): fire no later than it.
    func waiterDeadlineChanged(_ deadline: UInt64) {
        guard deadline < waiterTimerDeadline, !isDraining else { return }
        if waiterTimer == nil { waiterTimer = LoopTimer(loop: loop) { [unowned self] in self.waiterTimerFired() } }
        waiterTimerDeadline = deadline
        waiterTimer!.arm(at: deadline)
    }

    private func waiterTimerFired() {
        waiterTimerDeadline = .max
        let now = LoopTimer.now(loop)
        // Giving up removes the request from `waiting`, so walk a copy.
        for request in Array(waiting) where request.poolDeadline <= now {
            request.poolDeadlineReached()
        }
        if let next = waiting.map(\.poolDeadline).min() { waiterDeadlineChanged(next) }
    }

    /// Removes a request that no longer wants a connection.
    func cancel(_ request: PoolRequest) {
        guard takeWaiting(request.poolRequestID) != nil else { return }
        perform(machine.requestCancelled(request.poolRequestID))
        pacing?.cancelled(request.poolRequestID)
    }

    /// Queues a request of a paced origin: it waits, watched by the deadline timer like any
    /// waiter, until its pacer releases it to the machine (`releasePaced`).
    private func enqueuePaced(_ request: PoolRequest, _ pacing: PoolPacing) {
        waiting.append(request)
        waiterDeadlineChanged(request.poolDeadline)
        pacing.arrived(request.poolRequestID)
    }

    /// The pacer lets waiting request `id` go on: from here it is served like any other.
    func releasePaced(_ id: Int) {
        guard !isDraining else { return }
        perform(machine.requestArrived(id, requireFresh: false))
    }

    @exclusivity(unchecked) private var isDraining = false

    /// Closes every connection now, whatever its state (idle, connecting, or one a task has
    /// already abandoned): the session is gone or the loop is shutting down, and no task is left
    /// to use them. Each close stops the connection's timer and socket through libuv, so the pool
    /// can be freed as soon as this returns. The pool takes no request afterwards.
    func closeAll() {
        loop.assertInLoop()
        isDraining = true
        waiterTimer?.close()
        waiterTimer = nil
        pacing?.close()
        let open = connections
        connections.removeAll()
        for case let connection? in open { connection.close() }
    }

    private func perform(_ action: ConnectionPoolStateMachine.Action, error: HTTP1Error? = nil) {
        switch action {
        case .none:
            break
        case .execute(let requestID, let connectionID):
            guard let request = takeWaiting(requestID), let connection = connection(connectionID) else {
                preconditionFailure("pool machine named an unknown request \(requestID) or connection \(connectionID)")
            }
            pacing?.ended(requestID)
            request.poolAssigned(connection)
        case .openConnection(let id):
            open(id)
        case .replaceConnection(let victim, let id):
            connection(victim)?.close()
            open(id)
        case .parkIdle(let id):
            if isDraining {
                _ = machine.takeIdleConnections()
                connection(id)?.close()
            } else {
                connection(id)?.parkIdle(timeout: settings.idleTimeout)
            }
        case .failRequest(let requestID, let then):
            let request = takeWaiting(requestID)
            pacing?.ended(requestID)
            request?.poolFailed(error ?? .noConnection(host: host, port: port))
            perform(then)
        }
    }

    private func open(_ id: Int) {
        let connection = HTTP1Connection(id: id, loop: loop, owner: self, host: host, port: port, tls: tls, tunnel: tunnel, resolver: resolver,
                                         connectTimeout: settings.connectTimeout, decoderLimits: settings.decoderLimits)
        let slot = machine.slot(of: id)
        if slot >= connections.count { connections.append(contentsOf: repeatElement(nil, count: slot - connections.count + 1)) }
        connections[slot] = connection
        connection.start()
    }
}

extension ConnectionPool: HTTP1ConnectionOwner {
    func connectionReady(_ connection: HTTP1Connection) {
        perform(machine.connectionEstablished(connection.id))
    }

    func connection(_ connection: HTTP1Connection, failedToConnect error: HTTP1Error) {
        forget(connection)
        perform(machine.connectionFailed(connection.id), error: error)
    }

    func connectionReleased(_ connection: HTTP1Connection) {
        let action = machine.connectionReleased(connection.id)
        // The common end of an exchange with nobody waiting: the connection in hand goes idle,
        // without looking it up again by its number.
        if case .parkIdle(let id) = action, id == connection.id, !isDraining {
            connection.parkIdle(timeout: settings.idleTimeout)
            return
        }
        perform(action)
    }

    func connectionClosed(_ connection: HTTP1Connection) {
        forget(connection)
        perform(machine.connectionClosed(connection.id))
    }
}
