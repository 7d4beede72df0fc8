import DequeModule

/// The pool of one origin (scheme, host, port), as a value. Requests and connections are
/// identified by numbers; the shell (`ConnectionPool`) maps them to objects and performs the
/// actions.
///
/// A connection has a capacity: how many exchanges it carries at once. An HTTP/1.1 connection
/// carries one; an HTTP/2 connection as many streams as the server's
/// SETTINGS_MAX_CONCURRENT_STREAMS allows, which the server may change at any time
/// (`capacityChanged`). A connection whose server said GOAWAY takes no new exchange
/// (`connectionDraining`) and closes once its last one ends.
///
/// Rules it keeps:
/// - never more than `maximumConnections` open or opening connections;
/// - waiters are served first-in, first-out;
/// - a connection with room is used before another is opened: a second HTTP/2 connection is
///   opened only when every stream of the first is taken;
/// - of the connections with room, one that already carries exchanges is taken first (so
///   HTTP/2 streams gather on few connections and the others can idle out), then the most
///   recently used idle one (an idle connection's server-side timer is freshest);
/// - a connection being opened is counted for `expectedCapacity` waiters: 1 until the origin
///   has answered with HTTP/2 (or the session speaks it by prior knowledge), then the streams
///   its last connection allowed, so a burst of requests to an HTTP/2 origin opens one
///   connection, not one per request;
/// - a request that must not reuse a connection (a retry after a stale keep-alive failure) gets
///   a new one, closing an idle connection to make room when the pool is full;
/// - pipelining (HTTP/1.1): a request that allows it (`mayPipeline`) and finds no connection
///   with room and no room to open one is written behind the exchanges of an open connection
///   that offered pipelining (`pipelineDepthChanged`), the least loaded, up to its depth, when
///   every exchange on it allows pipelining too (so nothing is pipelined behind a POST). An
///   origin that misbehaved (`pipeliningFailed`) gets no more pipelined requests.
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
        /// Run the request on the connection (connected, with room for it). On a connection that
        /// carries several exchanges, the shell asks `nextExchange(on:)` for more.
        case execute(RequestID, on: ConnectionID)
        /// Pipeline the request onto the connection, behind the exchanges it carries (HTTP/1.1).
        case executePipelined(RequestID, on: ConnectionID)
        /// Open a new connection with this id.
        case openConnection(ConnectionID)
        /// Close an idle connection (to make room), then open a new one.
        case replaceConnection(close: ConnectionID, open: ConnectionID)
        /// The connection is idle with nobody waiting: start its idle timer.
        case parkIdle(ConnectionID)
        /// The connection drains (GOAWAY) and its last exchange ended: close it.
        case closeConnection(ConnectionID)
        /// Opening a connection failed: fail this waiter with the error, then do `then` (open a
        /// connection for the next waiters, or nothing).
        indirect case failRequest(RequestID, then: Action)
    }

    private struct Waiter: Sendable { var id: RequestID; var requireFresh: Bool; var mayPipeline: Bool }

    private enum Phase: UInt8 { case free, connecting, open }
    private struct Slot: Sendable {
        var id: ConnectionID
        var phase: Phase
        /// Exchanges running on it.
        var active: Int32 = 0
        /// Exchanges it may carry at once (0 while connecting, and once draining).
        var capacity: Int32 = 0
        var isDraining = false
        /// Listed in `available`.
        var isListed = false
        /// Exchanges it may carry at once when all of them allow pipelining; 0 until the
        /// connection offered pipelining.
        var pipelineDepth: Int32 = 0
        /// Whether the oldest exchange on it allows pipelining (the others do: they were
        /// pipelined).
        var headMayPipeline = false
        var hasRoom: Bool { phase == .open && !isDraining && active < capacity }
        var hasPipelineRoom: Bool {
            phase == .open && !isDraining && active > 0 && active < pipelineDepth && (active > 1 || headMayPipeline)
        }
    }

    /// At most a million: no process has the descriptors for more, and it keeps numbers far from
    /// overflowing.
    let maximumConnections: Int
    private let firstConnectionID: ConnectionID
    /// How many waiters a connection being opened is expected to serve at once.
    private(set) var expectedCapacity: Int
    private var waiters = Deque<Waiter>()
    /// Open connections with room for another exchange: first the idle ones, the most recently
    /// used last (`idleListed` of them), then those that carry exchanges. The next exchange takes
    /// the last. For HTTP/1.1 these are the idle connections.
    private var available: [ConnectionID] = []
    private var idleListed = 0
    private var slots: [Slot] = []
    /// Slots whose connection is gone, for the next one.
    private var freeSlots: [Int] = []
    private(set) var connectingCount = 0
    private var openCount = 0
    /// Waiters that allow pipelining.
    private(set) var pipelinableWaiterCount = 0
    /// The origin broke off or garbled pipelined exchanges: nothing more is pipelined.
    private(set) var pipeliningFailed = false
    /// A request that allows pipelining has had to wait. Until then a request that finds an idle
    /// connection is not asked whether it allows it (the common path pays nothing): pipelining
    /// helps only once requests queue.
    private(set) var pipeliningWanted = false

    /// - Parameter expectedCapacity: how many waiters a connection being opened serves at once
    ///   before the origin answered: 1, or a stream count for HTTP/2 by prior knowledge.
    init(maximumConnections: Int, firstConnectionID: ConnectionID = 1, expectedCapacity: Int = 1) {
        precondition(maximumConnections > 0, "a pool needs room for one connection")
        self.maximumConnections = min(maximumConnections, 1 << 20)
        self.firstConnectionID = firstConnectionID
        self.expectedCapacity = max(1, expectedCapacity)
    }

    /// Connections open or opening.
    var connectionCount: Int { openCount + connectingCount }
    /// Open connections with no exchange.
    var idleCount: Int { idleListed }
    var waiterCount: Int { waiters.count }
    /// Whether the waiters need every connection being opened: false once the others (all but
    /// one) are expected to serve them all, so a connection still waiting to open need not.
    var needsAnotherConnectionOpening: Bool { waiters.count > (connectingCount - 1) * expectedCapacity }
    var isEmpty: Bool { connectionCount == 0 && waiters.isEmpty }

    /// The slot a connection number belongs to (whether or not the connection is still there):
    /// the shell keeps its connection objects in an array indexed the same way.
    func slot(of connection: ConnectionID) -> Int {
        (connection - firstConnectionID) % maximumConnections
    }

    /// Exchanges running on `connection` (0 if the pool does not know it).
    func activeCount(of connection: ConnectionID) -> Int {
        guard let index = knownSlot(of: connection) else { return 0 }
        return Int(slots[index].active)
    }

    /// The slot of `connection` if the pool knows it (connecting or open).
    @inline(__always)
    private func knownSlot(of connection: ConnectionID) -> Int? {
        let index = slot(of: connection)
        guard index >= 0, index < slots.count, slots[index].id == connection, slots[index].phase != .free else { return nil }
        return index
    }

    /// A number for a new connection, in a free slot, marked connecting.
    private mutating func newConnectionID() -> ConnectionID {
        connectingCount += 1
        if let index = freeSlots.popLast() {
            slots[index].id += maximumConnections
            slots[index] = Slot(id: slots[index].id, phase: .connecting)
            return slots[index].id
        }
        let id = firstConnectionID + slots.count
        slots.append(Slot(id: id, phase: .connecting))
        return id
    }

    /// Frees the slot of a connection that is gone.
    private mutating func free(_ index: Int) {
        switch slots[index].phase {
        case .connecting: connectingCount -= 1
        case .open: openCount -= 1
        case .free: return
        }
        unlist(index)
        slots[index].phase = .free
        slots[index].active = 0
        freeSlots.append(index)
    }

    /// A request wants a connection. `mayPipeline`: it may be pipelined behind other exchanges
    /// (HTTP/1.1; an idempotent request whose body goes with its head).
    /// Asked only when it matters (no connection has room, or a request that allows pipelining
    /// has waited), so the common path pays nothing.
    @inline(__always)
    mutating func requestArrived(_ id: RequestID, requireFresh: Bool = false, mayPipeline: @autoclosure () -> Bool = false) -> Action {
        if !requireFresh, let connection = available.last {
            let index = slot(of: connection)
            if pipeliningWanted && slots[index].active == 0 { slots[index].headMayPipeline = mayPipeline() }
            take(index)
            return .execute(id, on: connection)
        }
        return requestWaits(id, requireFresh: requireFresh, mayPipeline: mayPipeline())
    }

    /// `requestArrived` when no connection has room: pipelined, or a waiter.
    @inline(never)
    private mutating func requestWaits(_ id: RequestID, requireFresh: Bool, mayPipeline pipelinable: Bool) -> Action {
        if pipelinable { pipeliningWanted = true }
        if pipelinable, !requireFresh, !pipeliningFailed, connectionCount >= maximumConnections, let index = leastLoadedPipeline() {
            take(index)
            return .executePipelined(id, on: slots[index].id)
        }
        waiters.append(Waiter(id: id, requireFresh: requireFresh, mayPipeline: pipelinable))
        if pipelinable { pipelinableWaiterCount += 1 }
        return openIfRoom()
    }

    /// The slot of the open connection with pipeline room that carries the fewest exchanges.
    private func leastLoadedPipeline() -> Int? {
        var best: Int?
        for index in slots.indices where slots[index].hasPipelineRoom {
            if best == nil || slots[index].active < slots[best!].active { best = index }
        }
        return best
    }

    /// Takes the waiter at `position` out of the queue.
    private mutating func removeWaiter(at position: Int) -> Waiter {
        let waiter = waiters.remove(at: position)
        if waiter.mayPipeline { pipelinableWaiterCount -= 1 }
        return waiter
    }

    /// The oldest waiter that may be pipelined onto the connection in slot `index`, if it has
    /// pipeline room.
    @inline(never)
    private mutating func pipelineWaiter(_ index: Int) -> Action {
        guard pipelinableWaiterCount > 0, !pipeliningFailed, slots[index].hasPipelineRoom,
              let position = waiters.firstIndex(where: { $0.mayPipeline && !$0.requireFresh }) else { return .none }
        let waiter = removeWaiter(at: position)
        take(index)
        return .executePipelined(waiter.id, on: slots[index].id)
    }

    /// `connection` offered pipelining (`depth` exchanges at once), or withdrew it (0). With
    /// room, the oldest waiter that allows it is pipelined (then `nextExchange(on:)`).
    mutating func pipelineDepthChanged(_ connection: ConnectionID, to depth: Int) -> Action {
        guard let index = knownSlot(of: connection), slots[index].phase == .open else { return .none }
        slots[index].pipelineDepth = depth > 1 ? Int32(clamping: depth) : 0
        return pipelineWaiter(index)
    }

    /// A connection of this origin broke off or garbled pipelined exchanges: none are pipelined
    /// any more (those running go on; their replays queue like any request).
    mutating func pipeliningMisbehaved() {
        pipeliningFailed = true
    }

    /// Opens a connection when some waiter has none coming.
    private mutating func openIfRoom() -> Action {
        guard waiters.count > connectingCount * expectedCapacity else { return .none }
        if connectionCount < maximumConnections {
            return .openConnection(newConnectionID())
        }
        // Full, but idle connections exist only when waiters all require fresh ones: trade one.
        if waiters.contains(where: \.requireFresh), idleListed > 0 {
            let victim = available[0]
            free(slot(of: victim))
            return .replaceConnection(close: victim, open: newConnectionID())
        }
        return .none
    }

    /// A waiter gave up (cancelled or timed out) before it got a connection.
    mutating func requestCancelled(_ id: RequestID) -> Action {
        if let position = waiters.firstIndex(where: { $0.id == id }) { _ = removeWaiter(at: position) }
        return .none
    }

    /// A new connection is ready for `capacity` exchanges at once (1 for HTTP/1.1). It takes the
    /// oldest waiter; with room for more, `nextExchange(on:)` gives the next ones.
    mutating func connectionEstablished(_ connection: ConnectionID, capacity: Int = 1) -> Action {
        guard let index = knownSlot(of: connection), slots[index].phase == .connecting else { return .none }
        connectingCount -= 1
        openCount += 1
        slots[index].phase = .open
        slots[index].capacity = Int32(clamping: capacity)
        if capacity > 1 { expectedCapacity = capacity }
        return assign(index, fresh: true)
    }

    /// The next waiter for a connection that still has room (after an `execute` on a connection
    /// that carries several exchanges), or `.none`.
    mutating func nextExchange(on connection: ConnectionID) -> Action {
        guard let index = knownSlot(of: connection) else { return .none }
        guard slots[index].hasRoom else { return pipelineWaiter(index) }
        guard let position = waiters.firstIndex(where: { !$0.requireFresh }) else { return .none }
        let waiter = removeWaiter(at: position)
        markHead(index, mayPipeline: waiter.mayPipeline)
        take(index)
        return .execute(waiter.id, on: connection)
    }

    /// One exchange on `connection` ended and it may carry another.
    mutating func connectionReleased(_ connection: ConnectionID) -> Action {
        guard let index = knownSlot(of: connection), slots[index].phase == .open, slots[index].active > 0 else { return .none }
        unlist(index)
        slots[index].active -= 1
        if slots[index].isDraining {
            return slots[index].active == 0 ? closeDrained(index) : .none
        }
        return assign(index, fresh: false)
    }

    /// The server changed how many streams `connection` may carry at once. With more room, the
    /// oldest waiter gets it (then `nextExchange(on:)`); with less, running exchanges go on and
    /// no new one starts until they are below it.
    mutating func capacityChanged(_ connection: ConnectionID, to capacity: Int) -> Action {
        guard let index = knownSlot(of: connection), slots[index].phase == .open, !slots[index].isDraining else { return .none }
        let hadRoom = slots[index].hasRoom
        slots[index].capacity = Int32(clamping: max(0, capacity))
        if capacity > 1 { expectedCapacity = capacity }
        if !slots[index].hasRoom {
            unlist(index)
        } else if !hadRoom {
            return assign(index, fresh: false)
        }
        return .none
    }

    /// The server said GOAWAY on `connection`: it takes no new exchange; running ones finish
    /// (or are replayed elsewhere). Waiters get another connection if there is room.
    mutating func connectionDraining(_ connection: ConnectionID) -> Action {
        guard let index = knownSlot(of: connection), slots[index].phase == .open, !slots[index].isDraining else { return .none }
        unlist(index)
        slots[index].isDraining = true
        if slots[index].active == 0 { return closeDrained(index) }
        return openIfRoom()
    }

    private mutating func closeDrained(_ index: Int) -> Action {
        let id = slots[index].id
        free(index)
        return .closeConnection(id)
    }

    /// Notes whether the exchange about to be counted on slot `index` allows pipelining, when it
    /// is the oldest there.
    private mutating func markHead(_ index: Int, mayPipeline: Bool) {
        if slots[index].active == 0 { slots[index].headMayPipeline = mayPipeline }
    }

    /// Counts an exchange on the open connection in slot `index` (which has room), keeping
    /// `available` right.
    private mutating func take(_ index: Int) {
        unlist(index)
        slots[index].active += 1
        if slots[index].hasRoom { list(index) }
    }

    /// Lists the connection in slot `index` (open, with room) as available: an idle one as the
    /// most recently used idle one, a busy one last.
    private mutating func list(_ index: Int) {
        if slots[index].active == 0 {
            // With HTTP/1.1 only, every listed connection is idle: an append.
            if idleListed == available.count {
                available.append(slots[index].id)
            } else {
                available.insert(slots[index].id, at: idleListed)
            }
            idleListed += 1
        } else {
            available.append(slots[index].id)
        }
        slots[index].isListed = true
    }

    /// Takes the connection in slot `index` off `available` if it is there. The one taken for
    /// the next exchange is the last, found at once.
    private mutating func unlist(_ index: Int) {
        guard slots[index].isListed, let position = available.lastIndex(of: slots[index].id) else { return }
        available.remove(at: position)
        if position < idleListed { idleListed -= 1 }
        slots[index].isListed = false
    }

    /// The open connection in slot `index` has room: the oldest waiter that may use it takes it,
    /// or it is listed as available (and parked if idle).
    private mutating func assign(_ index: Int, fresh: Bool) -> Action {
        let connection = slots[index].id
        guard slots[index].hasRoom else { return pipelineWaiter(index) }
        let position = fresh ? waiters.startIndex : waiters.firstIndex { !$0.requireFresh }
        if let position, position < waiters.endIndex {
            let waiter = removeWaiter(at: position)
            markHead(index, mayPipeline: waiter.mayPipeline)
            take(index)
            return .execute(waiter.id, on: connection)
        }
        list(index)
        return slots[index].active == 0 ? .parkIdle(connection) : .none
    }

    /// Opening `connection` failed (DNS, refused, timeout): the oldest waiter gets the error, and
    /// the others keep their chance with a new connection of their own.
    mutating func connectionFailed(_ connection: ConnectionID) -> Action {
        guard let index = knownSlot(of: connection), slots[index].phase == .connecting else { return .none }
        free(index)
        guard !waiters.isEmpty else { return .none }
        let waiter = removeWaiter(at: waiters.startIndex)
        return .failRequest(waiter.id, then: openIfRoom())
    }

    /// `connection` closed (peer close, error, idle timeout, or after a non-reusable exchange).
    mutating func connectionClosed(_ connection: ConnectionID) -> Action {
        guard let index = knownSlot(of: connection) else { return .none }
        free(index)
        return openIfRoom()
    }

    /// Idle connections to close (session invalidation, idle shutdown).
    mutating func takeIdleConnections() -> [ConnectionID] {
        let idle = Array(available[0..<idleListed])
        for connection in idle { free(slot(of: connection)) }
        return idle
    }
}
