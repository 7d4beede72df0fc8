import DequeModule
import UVHTTP1

/// Someone waiting for a connection from a pool: a task runner. Loop thread only.
protocol PoolRequest: AnyObject {
    /// The pool's number for this request (the task identifier).
    var poolRequestID: Int { get }
    /// A connection has room for the request: run it on this exchange.
    func poolAssigned(_ connection: Exchange)
    /// No connection could be opened for the request.
    func poolFailed(_ error: ExchangeError)
    /// When the request gives up waiting (loop milliseconds).
    var poolDeadline: UInt64 { get }
    /// Whether the request may be pipelined behind other exchanges (HTTP/1.1).
    var poolMayPipeline: Bool { get }
    /// `poolDeadline` passed while the request was still waiting.
    func poolDeadlineReached()
}

/// The I/O shell of one origin's keep-alive pool: maps the state machine's numbers to
/// connections (in the machine's slots) and waiting requests (in arrival order), and performs its
/// actions. Loop-confined.
///
/// Every connection it opens takes a unit of the session's budget across origins (`PoolSet`):
/// a connection the machine wants to open waits in `pendingOpens` until the budget has a unit
/// for it, and an idle connection is listed with the budget so that any pool's need can close
/// it (the least recently used first).
///
/// Stored properties opt out of runtime exclusivity checks: only the loop thread touches them,
/// and the state machines rule out re-entrant mutation. The checks cost more per request than
/// the work they guard.
final class ConnectionPool {
    struct Settings {
        var maximumConnections: Int
        var idleTimeout: Double
        var connectTimeout: Double
        var decoderLimits: ResponseParser.Options
        /// What HTTP/2 connections announce and enforce.
        var http2 = HTTP2Session.Settings()
        /// Connections speak HTTP/2 from the start (h2c by prior knowledge), without ALPN.
        var speaksHTTP2First = false
        /// How the connections' packets are marked (`Request.networkServiceType`).
        var serviceType = NetworkServiceType.default
        /// Exchanges an HTTP/1.1 connection carries at once with pipelining; below 2, none.
        var pipelineDepth = 0
        /// For an origin whose requests refuse cellular: how connections keep off it.
        var cellular: CellularScreen? = nil
    }

    let host: String
    let port: Int
    /// For an https origin: what its connections need for TLS. Set once, right after init.
    var tls: TLSRoute?
    /// For an https origin behind a proxy: the CONNECT tunnel. Set once, right after init.
    var tunnel: TunnelRoute?
    /// The key the owner files the pool under (the session engine's origin), to forget it when
    /// the pool is dropped. Set once, right after init.
    var origin: AnyHashable?
    /// For a session with a per-origin rate or delay: who says when a request may start
    /// (PoolPacing.swift). Set once, right after init; nil costs a request one check.
    @exclusivity(unchecked) var pacing: PoolPacing?
    /// For a session that logs or measures: who hears what the pool reports (PoolObserver.swift). Set
    /// once, right after init; nil costs an event one check.
    @exclusivity(unchecked) var observation: (any PoolObserver)?
    private let loop: EventLoop
    private let resolver: DNSResolver
    private let settings: Settings
    /// The session's pools and connection budget. Strong: the set lets the pool go when it
    /// drops it or closes.
    private let set: PoolSet
    /// This pool's number in `set` (it changes only if the pool is used again after a drop).
    @exclusivity(unchecked) private(set) var number = -1
    @exclusivity(unchecked) private var machine: ConnectionPoolStateMachine
    /// Indexed by `machine.slot(of:)`; a slot may still hold a connection the machine has
    /// replaced and that is closing, so lookups check the number.
    @exclusivity(unchecked) private var connections: [PoolEntry?] = []
    /// For each slot, its connection's node in the budget (its place in the idle list while it
    /// idles), else -1.
    @exclusivity(unchecked) private var budgetNodes: [ConnectionBudget.IdleNode] = []
    /// Connections the machine counts as opening that wait for a unit of the budget, oldest
    /// first.
    @exclusivity(unchecked) private var pendingOpens = Deque<Int>()
    /// When the pool last became empty (no connection, no waiter), loop milliseconds; .max
    /// while it is not.
    @exclusivity(unchecked) private(set) var emptiedAt: UInt64 = .max
    /// The set dropped this pool (see `PoolSet`); a request that still comes adds it again.
    @exclusivity(unchecked) private(set) var isDropped = false
    /// In arrival order, which is mostly the order they are served in.
    @exclusivity(unchecked) private var waiting = Deque<PoolRequest>()
    /// Fires at the earliest deadline among waiting requests; one per pool, made when first
    /// needed and closed when the pool drains.
    @exclusivity(unchecked) private var waiterTimer: LoopTimer?
    @exclusivity(unchecked) private var waiterTimerDeadline: UInt64 = .max

    init(host: String, port: Int, loop: EventLoop, resolver: DNSResolver, settings: Settings, set: PoolSet) {
        self.host = host
        self.port = port
        self.loop = loop
        self.resolver = resolver
        self.settings = settings
        self.set = set
        self.machine = ConnectionPoolStateMachine(maximumConnections: settings.maximumConnections,
                                                  expectedCapacity: settings.speaksHTTP2First ? Self.assumedStreamLimit : 1)
        number = set.add(self)
        // Empty from the start: a pool made for a request that never comes (a redirect
        // cancelled) is dropped like any other. The request that does come clears the note.
        noteIfEmpty()
    }

    /// Open or opening connections (not those still waiting for a unit of the budget).
    var connectionCount: Int { machine.connectionCount - pendingOpens.count }
    /// Bytes the HTTP/2 connections' sessions keep for their next streams (for tests: an idle
    /// connection gives them back, `HTTP2Connection.parkIdle`).
    var http2CachedBytes: Int {
        connections.reduce(0) { total, entry in
            guard case .http2(let connection)? = entry else { return total }
            return total + connection.cachedSessionBytes
        }
    }
    /// No connection (open, opening or waiting to open) and no waiter (paced ones included).
    var isEmpty: Bool { machine.isEmpty && waiting.isEmpty }

    /// The longest-waiting request: a new connection is opened on behalf of the queue, and the
    /// head of the queue is whom a TLS trust challenge is asked about.
    var oldestWaitingRequest: PoolRequest? {
        waiting.min { $0.poolRequestID < $1.poolRequestID }
    }

    /// The entry numbered `id`, if it is still in its slot.
    private func entry(_ id: Int) -> PoolEntry? {
        let slot = machine.slot(of: id)
        guard slot >= 0, slot < connections.count, let entry = connections[slot], entry.id == id else { return nil }
        return entry
    }

    /// The established connection numbered `id`, if it is still in its slot.
    private func connection(_ id: Int) -> PooledConnection? {
        entry(id)?.connection
    }

    /// Empties the slot of the connection numbered `id` unless `object` (the connection, or its
    /// connector) no longer holds it, taking it off the budget's idle list and giving its unit
    /// back.
    private func forget(_ id: Int, _ object: AnyObject) {
        let slot = machine.slot(of: id)
        guard slot >= 0, slot < connections.count, let entry = connections[slot], entry.object === object else { return }
        connections[slot] = nil
        if budgetNodes[slot] >= 0 {
            set.detach(budgetNodes[slot])
            budgetNodes[slot] = -1
        }
        set.released()
    }

    /// Notes the pool as empty with its set, which drops it after the idle timeout unless
    /// it is used again.
    private func noteIfEmpty() {
        guard isEmpty, emptiedAt == .max, !isDraining, !isDropped else { return }
        noteEmpty()
    }

    /// Notes the pool as empty from now (again, when its pacer still had a start to remember).
    func noteEmpty() {
        emptiedAt = LoopTimer.now(loop)
        set.poolEmptied(self, at: emptiedAt)
    }

    /// A request came: the pool is not empty, and is taken up again if it was dropped.
    private func markInUse() {
        if isDropped {
            isDropped = false
            number = set.add(self)
            pacing?.reopen()
        }
        emptiedAt = .max
    }

    /// Whether dropping the pool now forgets nothing its next request needs: its pacer has no
    /// start left to keep its distance from.
    var mayDrop: Bool { pacing?.isIdle ?? true }

    /// The set dropped the pool: what it still holds for later goes.
    func dropped() {
        pacing?.close()
        isDropped = true
        waiterTimer?.close()
        waiterTimer = nil
        waiterTimerDeadline = .max
        connections = []
        budgetNodes = []
    }

    // MARK: The budget

    /// A connection the machine opens: now if the budget has a unit, else when it grants one.
    private func openWithinBudget(_ id: Int) {
        guard !isDraining else { return }
        // Listed first: making room may close an idle connection and grant the unit at once.
        pendingOpens.append(id)
        if set.requestOpen(self) {
            pendingOpens.removeLast()
            open(id)
        } else {
            observation?.waitingForBudget(connection: id)
        }
    }

    /// The budget granted a unit: the oldest pending connection opens, unless the machine no
    /// longer needs it (its waiters were served or gave up). False when the unit is not used.
    func takeGrant() -> Bool {
        guard let id = pendingOpens.popFirst(), !isDraining else { return false }
        if !machine.needsAnotherConnectionOpening {
            perform(machine.connectionClosed(id))
            noteIfEmpty()
            return false
        }
        open(id)
        return true
    }

    /// Closes the idle connection `id` for the budget (its node is already off the list). Its
    /// close gives the unit back, which the waiting pool gets.
    func evict(_ id: Int) -> Bool {
        guard let connection = connection(id) else { return false }
        observation?.evicting(connection)
        connection.close()
        return true
    }

    /// `connection` would idle: listed with the budget and its idle timer started, or closed at
    /// once when some pool waits for a unit.
    @inline(__always)
    private func park(_ connection: PooledConnection) {
        guard set.parked(budgetNodes[machine.slot(of: connection.id)]) else {
            connection.observation?.noteCloseReason(set.closesIdleConnections
                ? "the session is shutting down" : "closed instead of idling: a request waits for the connection budget")
            connection.close()
            return
        }
        observation?.parked(connection)
        connection.parkIdle(timeout: settings.idleTimeout)
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
        let action = machine.requestArrived(id, requireFresh: requireFreshConnection, mayPipeline: request.poolMayPipeline)
        if case .execute(id, let connectionID) = action {
            let slot = machine.slot(of: connectionID)
            if slot < connections.count, case .http1(let connection)? = connections[slot], connection.id == connectionID {
                // The common case with keep-alive: an idle connection at once, off the budget's
                // idle list (a few array stores), no other bookkeeping.
                set.unparked(budgetNodes[slot])
                request.poolAssigned(connection)
                return
            }
        }
        markInUse()
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
        noteIfEmpty()
    }

    /// Queues a request of a paced origin: it waits, watched by the deadline timer like any
    /// waiter, until its pacer releases it to the machine (`releasePaced`).
    private func enqueuePaced(_ request: PoolRequest, _ pacing: PoolPacing) {
        markInUse()
        waiting.append(request)
        waiterDeadlineChanged(request.poolDeadline)
        pacing.arrived(request.poolRequestID)
    }

    /// The pacer lets waiting request `id` go on: from here it is served like any other.
    func releasePaced(_ id: Int) {
        guard !isDraining else { return }
        let mayPipeline = waiting.first { $0.poolRequestID == id }?.poolMayPipeline ?? false
        perform(machine.requestArrived(id, requireFresh: false, mayPipeline: mayPipeline))
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
        budgetNodes.removeAll()
        pendingOpens.removeAll()
        for case let entry? in open {
            switch entry {
            case .connecting(let connector, let observation):
                observation?.closed()
                connector.cancel()
            case .http1(let connection):
                connection.observation?.noteCloseReason("the session or its loop is closing")
                connection.close()
            case .http2(let connection):
                connection.observation?.noteCloseReason("the session or its loop is closing")
                connection.close()
            }
        }
    }

    /// Closes the idle connections (the session drains); those in use stay for their task.
    /// An HTTP/2 connection in use says GOAWAY now, so its server learns at once that no stream
    /// follows (RFC 9113 §6.8), and closes after its last stream.
    func closeIdleConnections() {
        for id in machine.takeIdleConnections() {
            guard let connection = connection(id) else { continue }
            connection.observation?.noteCloseReason("the session is shutting down")
            connection.close()
        }
        for case .http2(let connection)? in connections {
            connection.observation?.noteCloseReason("the session is shutting down")
            connection.drain()
        }
    }

    private func perform(_ action: ConnectionPoolStateMachine.Action, error: ExchangeError? = nil) {
        switch action {
        case .none:
            break
        case .execute(let requestID, let connectionID):
            guard let request = takeWaiting(requestID), let entry = entry(connectionID) else {
                preconditionFailure("pool machine named an unknown request \(requestID) or connection \(connectionID)")
            }
            pacing?.ended(requestID)
            // Off the budget's idle list if it idled (a paced request, a stream on an idle
            // HTTP/2 connection): a connection in use is never evicted.
            set.unparkedIfParked(budgetNodes[machine.slot(of: connectionID)])
            switch entry {
            case .http1(let connection):
                request.poolAssigned(connection)
                // More waiters may be pipelined behind it.
                if machine.pipelinableWaiterCount > 0 { perform(machine.nextExchange(on: connectionID)) }
            case .http2(let connection):
                request.poolAssigned(connection.makeStream())
                // More waiters may fit on its streams.
                perform(machine.nextExchange(on: connectionID))
            case .connecting:
                preconditionFailure("pool machine assigned request \(requestID) to connection \(connectionID) before it was established")
            }
        case .executePipelined(let requestID, let connectionID):
            guard case .http1(let connection)? = entry(connectionID) else {
                preconditionFailure("pool machine pipelined onto \(connectionID), which is not an HTTP/1.1 connection")
            }
            guard let request = takeWaiting(requestID) else { preconditionFailure("pool machine pipelined an unknown request \(requestID)") }
            pacing?.ended(requestID)
            // A connection whose exchange just ended, before it reported so, is idle: the
            // request is its own exchange, not one pipelined behind another.
            request.poolAssigned(connection.isIdle ? connection : connection.makePipelinedExchange())
            if machine.pipelinableWaiterCount > 0 { perform(machine.nextExchange(on: connectionID)) }
        case .openConnection(let id):
            openWithinBudget(id)
        case .replaceConnection(let victim, let id):
            connection(victim)?.close()
            openWithinBudget(id)
        case .parkIdle(let id):
            if isDraining {
                _ = machine.takeIdleConnections()
                connection(id)?.close()
            } else if let connection = connection(id) {
                park(connection)
            }
        case .closeConnection(let id):
            connection(id)?.close()
        case .failRequest(let requestID, let then):
            let request = takeWaiting(requestID)
            pacing?.ended(requestID)
            request?.poolFailed(error ?? .noConnection(host: host, port: port))
            perform(then)
        }
    }

    private func open(_ id: Int) {
        let connector = TransportConnector(id: id, loop: loop, delegate: self, host: host, port: port, tls: tls, tunnel: tunnel,
                                           resolver: resolver, connectTimeout: settings.connectTimeout,
                                           serviceType: settings.serviceType, cellular: settings.cellular)
        let slot = machine.slot(of: id)
        if slot >= connections.count {
            connections.append(contentsOf: repeatElement(nil, count: slot - connections.count + 1))
            budgetNodes.append(contentsOf: repeatElement(-1, count: slot - budgetNodes.count + 1))
        }
        // A connection still in the slot (replaced, its close not yet reported) gives its unit
        // back now: its report will not find it.
        if let old = connections[slot] { forget(old.id, old.object) }
        connections[slot] = .connecting(connector, observation?.opening(connection: id, waiting: waiting.count))
        budgetNodes[slot] = set.attach(self, connection: id)
        connector.start()
    }
}

extension ConnectionPool: TransportConnectorDelegate {
    func connector(_ connector: TransportConnector, established transport: StreamTransport, applicationProtocol: String?) {
        let slot = machine.slot(of: connector.id)
        guard slot >= 0, slot < connections.count, case .connecting(let held, let connectionObservation)? = connections[slot],
              held === connector else {
            transport.close(reset: false)
            return
        }
        set.established()
        if applicationProtocol == "h2" || (settings.speaksHTTP2First && tls == nil) {
            let connection = HTTP2Connection(id: connector.id, loop: loop, owner: self, transport: transport, timings: connector.timings,
                                             scheme: tls == nil ? "http" : "https", settings: settings.http2)
            connection.observation = connectionObservation
            connections[slot] = .http2(connection)
            do {
                try connection.start()
            } catch {
                connection.close()
                return
            }
            observation?.ready(connection)
            // Until the server's SETTINGS say otherwise, RFC 9113 §6.5.2's recommended floor.
            perform(machine.connectionEstablished(connection.id, capacity: Self.assumedStreamLimit))
            return
        }
        let connection = HTTP1Connection(id: connector.id, loop: loop, owner: self, transport: transport, timings: connector.timings,
                                         decoderLimits: settings.decoderLimits)
        connection.observation = connectionObservation
        connections[slot] = .http1(connection)
        connection.start()
        observation?.ready(connection)
        perform(machine.connectionEstablished(connection.id))
    }

    /// How many streams an HTTP/2 connection is assumed to carry before its server's SETTINGS
    /// arrive: the smallest limit RFC 9113 §6.5.2 recommends servers allow.
    static let assumedStreamLimit = 100

    func connector(_ connector: TransportConnector, failed failure: ConnectFailure) {
        let error = ExchangeError(failure)
        if let observation, case .connecting(_, let connectionObservation)? = entry(connector.id) {
            observation.failedToConnect(connection: connector.id, connectionObservation, error)
        }
        if let status = Self.descriptorShortage(error), !isDraining,
           case let slot = machine.slot(of: connector.id), slot >= 0, slot < connections.count,
           case .connecting(let held, _)? = connections[slot], held === connector {
            // No socket (for the connect or the look-up) for want of a descriptor: an idle
            // connection of any origin gives way and the connection is tried again, or it waits
            // first in line for one to close.
            connections[slot] = nil
            set.detach(budgetNodes[slot])
            budgetNodes[slot] = -1
            pendingOpens.prepend(connector.id)
            if set.descriptorsExhausted(self) { return }
            pendingOpens.removeFirst()
            perform(machine.connectionFailed(connector.id), error: .descriptorsExhausted(host: host, port: port, status: status))
            noteIfEmpty()
            return
        }
        forget(connector.id, connector)
        perform(machine.connectionFailed(connector.id), error: error)
        noteIfEmpty()
    }

    /// The libuv status when `error` says a socket could not be made for want of a descriptor.
    private static func descriptorShortage(_ error: ExchangeError) -> Int32? {
        switch error {
        case .connectFailed(_, _, let status) where UVError.isDescriptorShortage(status): return status
        case .transport(.resolutionDescriptorsExhausted(_, let status)): return status
        default: return nil
        }
    }
}

extension ConnectionPool: HTTP1ConnectionOwner {
    @inline(__always)
    func connectionReleased(_ connection: HTTP1Connection) {
        released(connection)
    }

    func connectionClosed(_ connection: HTTP1Connection) {
        closed(connection)
    }

    func connectionMayPipeline(_ connection: HTTP1Connection) {
        guard settings.pipelineDepth > 1 else { return }
        perform(machine.pipelineDepthChanged(connection.id, to: settings.pipelineDepth))
    }

    func connectionStopsPipelining(_ connection: HTTP1Connection) {
        guard settings.pipelineDepth > 1 else { return }
        perform(machine.pipelineDepthChanged(connection.id, to: 0))
    }

    func connectionMisbehavedWhilePipelining(_ connection: HTTP1Connection) {
        guard !machine.pipeliningFailed else { return }
        connection.observation?.noteCloseReason("the server broke off pipelined exchanges: no more pipelining to this origin")
        machine.pipeliningMisbehaved()
    }

    /// An exchange on `connection` ended and it has room again.
    @inline(__always)
    private func released(_ connection: PooledConnection) {
        let action = machine.connectionReleased(connection.id)
        // The common end of an exchange with nobody waiting: the connection in hand goes idle,
        // without looking it up again by its number.
        if case .parkIdle(let id) = action, id == connection.id, !isDraining {
            park(connection)
            return
        }
        perform(action)
    }

    /// `connection` closed, whatever its protocol.
    private func closed(_ connection: PooledConnection) {
        observation?.closed(connection)
        forget(connection.id, connection)
        perform(machine.connectionClosed(connection.id))
        noteIfEmpty()
    }
}

/// What a pool's slot holds: a connection being established, or an established connection of
/// either protocol.
enum PoolEntry {
    /// With what the session observes of it while it opens, if it observes.
    case connecting(TransportConnector, (any ConnectionObserver)?)
    case http1(HTTP1Connection)
    case http2(HTTP2Connection)

    var id: Int {
        switch self {
        case .connecting(let connector, _): return connector.id
        case .http1(let connection): return connection.id
        case .http2(let connection): return connection.id
        }
    }

    /// The object in the slot, to tell a replaced occupant from the current one.
    var object: AnyObject {
        switch self {
        case .connecting(let connector, _): return connector
        case .http1(let connection): return connection
        case .http2(let connection): return connection
        }
    }

    /// The established connection, if the slot holds one.
    var connection: PooledConnection? {
        switch self {
        case .connecting: return nil
        case .http1(let connection): return connection
        case .http2(let connection): return connection
        }
    }
}

extension ConnectionPool: HTTP2ConnectionOwner {
    func connection(_ connection: HTTP2Connection, changedStreamLimit limit: Int) {
        perform(machine.capacityChanged(connection.id, to: limit))
    }

    func connectionReleasedStream(_ connection: HTTP2Connection) {
        released(connection)
    }

    func connectionDraining(_ connection: HTTP2Connection) {
        connection.observation?.noteCloseReason("the server said GOAWAY")
        perform(machine.connectionDraining(connection.id))
    }

    func connectionClosed(_ connection: HTTP2Connection) {
        closed(connection)
    }
}
