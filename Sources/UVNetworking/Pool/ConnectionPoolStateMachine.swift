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
///
/// Connections live in slots, an array indexed by a connection's number: the number is
/// `firstConnectionID + slot + n * maximumConnections` for the n-th connection of that slot, so
/// numbers are never reused, and finding a connection's slot is a division, not a hash (the
/// shell finds its objects the same way, `slot(of:)`).
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

    private enum Phase: UInt8 { case free, connecting, idle, busy }
    private struct Slot: Sendable {
        var id: ConnectionID
        var phase: Phase
    }

    /// At most a million: no process has the descriptors for more, and it keeps numbers far from
    /// overflowing.
    let maximumConnections: Int
    private let firstConnectionID: ConnectionID
    private var waiters = Deque<Waiter>()
    /// Idle connections, the most recently used last.
    private var idle: [ConnectionID] = []
    private var slots: [Slot] = []
    /// Slots whose connection is gone, for the next one.
    private var freeSlots: [Int] = []
    private(set) var connectingCount = 0
    private var busyCount = 0

    init(maximumConnections: Int, firstConnectionID: ConnectionID = 1) {
        precondition(maximumConnections > 0, "a pool needs room for one connection")
        self.maximumConnections = min(maximumConnections, 1 << 20)
        self.firstConnectionID = firstConnectionID
    }

    /// Connections open or opening.
    var connectionCount: Int { idle.count + connectingCount + busyCount }
    var idleCount: Int { idle.count }
    var waiterCount: Int { waiters.count }
    var isEmpty: Bool { connectionCount == 0 && waiters.isEmpty }

    /// The slot a connection number belongs to (whether or not the connection is still there):
    /// the shell keeps its connection objects in an array indexed the same way.
    func slot(of connection: ConnectionID) -> Int {
        (connection - firstConnectionID) % maximumConnections
    }

    /// The slot of `connection` if the pool knows it in `phase`.
    private func slot(of connection: ConnectionID, in phase: Phase) -> Int? {
        let index = slot(of: connection)
        guard index >= 0, index < slots.count, slots[index].id == connection, slots[index].phase == phase else { return nil }
        return index
    }

    /// A number for a new connection, in a free slot, marked connecting.
    private mutating func newConnectionID() -> ConnectionID {
        connectingCount += 1
        if let index = freeSlots.popLast() {
            slots[index].id += maximumConnections
            slots[index].phase = .connecting
            return slots[index].id
        }
        let id = firstConnectionID + slots.count
        slots.append(Slot(id: id, phase: .connecting))
        return id
    }

    private mutating func setPhase(_ index: Int, _ phase: Phase) {
        switch slots[index].phase {
        case .connecting: connectingCount -= 1
        case .busy: busyCount -= 1
        case .idle, .free: break
        }
        switch phase {
        case .connecting: connectingCount += 1
        case .busy: busyCount += 1
        case .idle: break
        case .free: freeSlots.append(index)
        }
        slots[index].phase = phase
    }

    /// A request wants a connection.
    mutating func requestArrived(_ id: RequestID, requireFresh: Bool = false) -> Action {
        if !requireFresh, let connection = idle.popLast() {
            setPhase(slot(of: connection), .busy)
            return .execute(id, on: connection)
        }
        waiters.append(Waiter(id: id, requireFresh: requireFresh))
        return openIfRoom()
    }

    /// Opens a connection when some waiter has none coming.
    private mutating func openIfRoom() -> Action {
        guard waiters.count > connectingCount else { return .none }
        if connectionCount < maximumConnections {
            return .openConnection(newConnectionID())
        }
        // Full, but idle connections exist only when waiters all require fresh ones: trade one.
        if waiters.contains(where: \.requireFresh), let victim = idle.first {
            idle.removeFirst()
            setPhase(slot(of: victim), .free)
            return .replaceConnection(close: victim, open: newConnectionID())
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
        guard let index = slot(of: connection, in: .connecting) else { return .none }
        return assign(connection, index, fresh: true)
    }

    /// The exchange on `connection` ended and it may carry another request.
    mutating func connectionReleased(_ connection: ConnectionID) -> Action {
        guard let index = slot(of: connection, in: .busy) else { return .none }
        return assign(connection, index, fresh: false)
    }

    private mutating func assign(_ connection: ConnectionID, _ slot: Int, fresh: Bool) -> Action {
        let index = fresh ? waiters.startIndex : waiters.firstIndex { !$0.requireFresh }
        if let index, index < waiters.endIndex {
            let waiter = waiters.remove(at: index)
            setPhase(slot, .busy)
            return .execute(waiter.id, on: connection)
        }
        setPhase(slot, .idle)
        idle.append(connection)
        return .parkIdle(connection)
    }

    /// Opening `connection` failed (DNS, refused, timeout): the oldest waiter gets the error, and
    /// the others keep their chance with a new connection of their own.
    mutating func connectionFailed(_ connection: ConnectionID) -> Action {
        guard let index = slot(of: connection, in: .connecting) else { return .none }
        setPhase(index, .free)
        guard let waiter = waiters.popFirst() else { return .none }
        return .failRequest(waiter.id, then: openIfRoom())
    }

    /// `connection` closed (peer close, error, idle timeout, or after a non-reusable exchange).
    mutating func connectionClosed(_ connection: ConnectionID) -> Action {
        let index = slot(of: connection)
        guard index >= 0, index < slots.count, slots[index].id == connection, slots[index].phase != .free else { return .none }
        if slots[index].phase == .idle, let position = idle.firstIndex(of: connection) {
            idle.remove(at: position)
        }
        setPhase(index, .free)
        return openIfRoom()
    }

    /// Idle connections to close (session invalidation, idle shutdown).
    mutating func takeIdleConnections() -> [ConnectionID] {
        for connection in idle { setPhase(slot(of: connection), .free) }
        defer { idle.removeAll() }
        return idle
    }
}
