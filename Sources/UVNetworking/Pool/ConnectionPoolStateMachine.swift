import DequeModule

/// The keep-alive pool of one origin (scheme, host, port), as a value. Requests and connections
/// are identified by numbers; the shell (`ConnectionPool`) maps them to objects and performs the
/// actions.
///
/// Rules it keeps:
/// - never more than `maximumConnections` open or opening connections;
/// - waiters are served first-in, first-out;
/// - the most recently used idle connection is reused first (its server-side timer is freshest);
/// - a request that must not reuse a connection (a retry after a stale keep-alive failure) gets
///   a new one, closing an idle connection to make room when the pool is full.
struct ConnectionPoolStateMachine: Sendable {
    typealias RequestID = Int
    typealias ConnectionID = Int

    enum Action: Equatable, Sendable {
        case none
        /// Run the request on the (idle, connected) connection.
        case execute(RequestID, on: ConnectionID)
        /// Open a new connection with this id.
        case openConnection(ConnectionID)
        /// Close an idle connection (to make room), then open a new one.
        case replaceConnection(close: ConnectionID, open: ConnectionID)
        /// The connection is idle with nobody waiting: start its idle timer.
        case parkIdle(ConnectionID)
        /// Opening a connection failed: fail this waiter with the error, then do `then` (open a
        /// connection for the next waiters, or nothing).
        indirect case failRequest(RequestID, then: Action)
    }

    private struct Waiter: Sendable { var id: RequestID; var requireFresh: Bool }

    let maximumConnections: Int
    private var waiters = Deque<Waiter>()
    /// Idle connections, the most recently used last.
    private var idle: [ConnectionID] = []
    private var connecting: Set<ConnectionID> = []
    private var busy: Set<ConnectionID> = []
    private var nextConnectionID: ConnectionID

    init(maximumConnections: Int, firstConnectionID: ConnectionID = 1) {
        precondition(maximumConnections > 0, "a pool needs room for one connection")
        self.maximumConnections = maximumConnections
        self.nextConnectionID = firstConnectionID
    }

    /// Connections open or opening.
    var connectionCount: Int { idle.count + connecting.count + busy.count }
    var idleCount: Int { idle.count }
    var waiterCount: Int { waiters.count }
    var isEmpty: Bool { connectionCount == 0 && waiters.isEmpty }

    private mutating func newConnectionID() -> ConnectionID {
        defer { nextConnectionID += 1 }
        return nextConnectionID
    }

    /// A request wants a connection.
    mutating func requestArrived(_ id: RequestID, requireFresh: Bool = false) -> Action {
        if !requireFresh, let connection = idle.popLast() {
            busy.insert(connection)
            return .execute(id, on: connection)
        }
        waiters.append(Waiter(id: id, requireFresh: requireFresh))
        return openIfRoom()
    }

    /// Opens a connection when some waiter has none coming.
    private mutating func openIfRoom() -> Action {
        guard waiters.count > connecting.count else { return .none }
        if connectionCount < maximumConnections {
            let id = newConnectionID()
            connecting.insert(id)
            return .openConnection(id)
        }
        // Full, but idle connections exist only when waiters all require fresh ones: trade one.
        if waiters.contains(where: \.requireFresh), let victim = idle.first {
            idle.removeFirst()
            let id = newConnectionID()
            connecting.insert(id)
            return .replaceConnection(close: victim, open: id)
        }
        return .none
    }

    /// A waiter gave up (cancelled or timed out) before it got a connection.
    mutating func requestCancelled(_ id: RequestID) -> Action {
        waiters.removeAll { $0.id == id }
        return .none
    }

    /// A new connection is ready.
    mutating func connectionEstablished(_ connection: ConnectionID) -> Action {
        guard connecting.remove(connection) != nil else { return .none }
        return assign(connection, fresh: true)
    }

    /// The exchange on `connection` ended and it may carry another request.
    mutating func connectionReleased(_ connection: ConnectionID) -> Action {
        guard busy.remove(connection) != nil else { return .none }
        return assign(connection, fresh: false)
    }

    private mutating func assign(_ connection: ConnectionID, fresh: Bool) -> Action {
        let index = fresh ? waiters.startIndex : waiters.firstIndex { !$0.requireFresh }
        if let index, index < waiters.endIndex {
            let waiter = waiters.remove(at: index)
            busy.insert(connection)
            return .execute(waiter.id, on: connection)
        }
        idle.append(connection)
        return .parkIdle(connection)
    }

    /// Opening `connection` failed (DNS, refused, timeout): the oldest waiter gets the error, and
    /// the others keep their chance with a new connection of their own.
    mutating func connectionFailed(_ connection: ConnectionID) -> Action {
        guard connecting.remove(connection) != nil else { return .none }
        guard let waiter = waiters.popFirst() else { return .none }
        return .failRequest(waiter.id, then: openIfRoom())
    }

    /// `connection` closed (peer close, error, idle timeout, or after a non-reusable exchange).
    mutating func connectionClosed(_ connection: ConnectionID) -> Action {
        if let index = idle.firstIndex(of: connection) {
            idle.remove(at: index)
        } else if busy.remove(connection) == nil {
            if connecting.remove(connection) == nil { return .none }
        }
        return openIfRoom()
    }

    /// Idle connections to close (session invalidation, idle shutdown).
    mutating func takeIdleConnections() -> [ConnectionID] {
        defer { idle.removeAll() }
        return idle
    }
}
