import DequeModule
import Glibc

/// A session's connection budget across all its origins, as a value: how many connections are
/// open or opening (each holds a unit), which idle ones may give way, and which pools wait for
/// a unit. Pools are numbered by the shell (`PoolSet`); connections by their pool.
///
/// Rules it keeps:
/// - never more units out than `limit` (and, once the process ran out of descriptors, than the
///   number it could hold: `descriptorCeiling`);
/// - when a pool wants a unit and none is free, the least recently used idle connection of any
///   pool closes to make room; with none idle, the pool waits;
/// - waiting pools are served oldest first, across origins;
/// - an idle connection is never kept while a pool waits: it closes as it parks.
///
/// Each open connection has a node in `nodes` for its life (`attach`, `detach`; freed nodes are
/// reused, so the steady state allocates nothing). Idle ones are linked into a doubly linked
/// list through their nodes, least recently used at `head`: parking, reusing and evicting are a
/// few array stores, with no hashing.
struct ConnectionBudget: Sendable {
    typealias PoolID = Int
    typealias ConnectionID = Int
    /// A connection's node: its place in the idle list while it idles.
    typealias IdleNode = Int

    /// An idle connection chosen to close.
    struct Victim: Equatable, Sendable {
        var pool: PoolID
        var connection: ConnectionID
    }

    enum Action: Equatable, Sendable {
        case none
        /// The pool that asked may open its connection now (its unit is taken).
        case open
        /// The pool that asked waits; closing this idle connection frees the unit the oldest
        /// waiting pool gets (`released` then answers `grant`).
        case close(Victim)
        /// The pool that asked waits for a connection to close.
        case wait
        /// This pool gets a unit: it opens its oldest waiting connection.
        case grant(PoolID)
        /// Nothing of the session is open to give way: the pool's request fails.
        case fail
    }

    private struct Node: Sendable {
        var previous: IdleNode
        var next: IdleNode
        var pool: PoolID
        var connection: ConnectionID
    }

    private static let nowhere = -1
    /// `previous` of a node that is not in the idle list.
    private static let unlinked = -2

    /// The most connections open or opening at once.
    let limit: Int
    /// Units out: connections open or opening.
    private(set) var units = 0
    /// The most units ever out at once (for tests and metrics).
    private(set) var peakUnits = 0
    /// Set when a connect failed for want of a descriptor: the units the process could hold
    /// then. Raised by one at each connection established at it, to find room again as other
    /// descriptors close.
    private(set) var descriptorCeiling: Int?
    /// Pools waiting for a unit, one entry per connection they want, oldest first.
    private var waiting = Deque<PoolID>()
    private var nodes: [Node] = []
    private var head = nowhere
    private var tail = nowhere
    private var freeNodes = nowhere
    private(set) var idleCount = 0

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Units that may be out now.
    var ceiling: Int { min(limit, descriptorCeiling ?? .max) }
    var waitingCount: Int { waiting.count }

    /// The least recently used idle connection, if any.
    var leastRecentlyUsed: Victim? {
        head == Self.nowhere ? nil : Victim(pool: nodes[head].pool, connection: nodes[head].connection)
    }

    private mutating func take() {
        units += 1
        if units > peakUnits { peakUnits = units }
    }

    /// `pool` wants to open a connection: `.open`, `.close(victim)` (it waits, and the victim's
    /// close makes room) or `.wait`.
    mutating func requestOpen(_ pool: PoolID) -> Action {
        if waiting.isEmpty && units < ceiling {
            take()
            return .open
        }
        waiting.append(pool)
        if let victim = evictLeastRecentlyUsed() { return .close(victim) }
        return .wait
    }

    /// Connection `connection` of `pool` opens (with a unit): its node, for its life.
    mutating func attach(_ pool: PoolID, _ connection: ConnectionID) -> IdleNode {
        let fresh = Node(previous: Self.unlinked, next: Self.nowhere, pool: pool, connection: connection)
        guard freeNodes != Self.nowhere else {
            nodes.append(fresh)
            return nodes.count - 1
        }
        let node = freeNodes
        freeNodes = nodes[node].next
        nodes[node] = fresh
        return node
    }

    /// The connection at `node` is gone: off the idle list if it idled, its node free.
    mutating func detach(_ node: IdleNode) {
        if nodes[node].previous != Self.unlinked { unparked(node) }
        nodes[node].next = freeNodes
        freeNodes = node
    }

    /// The connection at `node` finished an exchange and would idle: true when it is listed as
    /// the most recently used idle connection; false when a pool waits for a unit: then the
    /// connection closes now (and `released` serves the waiter).
    mutating func parked(_ node: IdleNode) -> Bool {
        guard waiting.isEmpty else { return false }
        let tail = self.tail
        // One uniqueness check for the stores, not one per store: this runs per request.
        nodes.withUnsafeMutableBufferPointer { nodes in
            nodes[node].previous = tail
            nodes[node].next = Self.nowhere
            if tail != Self.nowhere { nodes[tail].next = node }
        }
        if tail == Self.nowhere { head = node }
        self.tail = node
        idleCount += 1
        return true
    }

    /// Whether the connection at `node` is on the idle list.
    func isParked(_ node: IdleNode) -> Bool {
        node >= 0 && node < nodes.count && nodes[node].previous != Self.unlinked
    }

    /// The connection at `node` is idle no more: reused by its pool, or chosen to close.
    mutating func unparked(_ node: IdleNode) {
        let (previous, next) = nodes.withUnsafeMutableBufferPointer { nodes in
            let previous = nodes[node].previous, next = nodes[node].next
            if previous != Self.nowhere { nodes[previous].next = next }
            if next != Self.nowhere { nodes[next].previous = previous }
            nodes[node].previous = Self.unlinked
            return (previous, next)
        }
        if previous == Self.nowhere { head = next }
        if next == Self.nowhere { tail = previous }
        idleCount -= 1
    }

    /// Takes the least recently used idle connection out of the list (its node stays attached
    /// until it closes).
    private mutating func evictLeastRecentlyUsed() -> Victim? {
        guard let victim = leastRecentlyUsed else { return nil }
        unparked(head)
        return victim
    }

    /// A connection holding a unit closed (or failed to connect, or was not needed after all):
    /// its unit goes to the oldest waiting pool, if any may have it.
    mutating func released() -> Action {
        precondition(units > 0, "budget released a unit it never gave")
        units -= 1
        return serve()
    }

    private mutating func serve() -> Action {
        guard units < ceiling, let pool = waiting.popFirst() else { return .none }
        take()
        return .grant(pool)
    }

    /// A connection of `pool` holding a unit could not get a socket (EMFILE, ENFILE). Its unit
    /// is given back; the process holds no more than the other units, so that becomes the
    /// ceiling. `.close(victim)`: an idle connection gives way and the pool, first in line,
    /// gets the unit that frees. `.wait`: none is idle, the pool waits first in line for a
    /// connection to close. `.fail`: nothing of ours is open that could.
    mutating func descriptorsExhausted(_ pool: PoolID) -> Action {
        precondition(units > 0, "budget released a unit it never gave")
        units -= 1
        guard units > 0 else { return .fail }
        descriptorCeiling = units
        waiting.prepend(pool)
        if let victim = evictLeastRecentlyUsed() { return .close(victim) }
        return .wait
    }

    /// A connection got its socket and connected. At the descriptor ceiling, one more is tried:
    /// descriptors closed elsewhere may have made room.
    mutating func established() -> Action {
        guard let ceiling = descriptorCeiling, units >= ceiling else { return .none }
        descriptorCeiling = ceiling + 1 >= limit ? nil : ceiling + 1
        return serve()
    }
}

/// The process's file descriptor limit (RLIMIT_NOFILE), which bounds how many connections it
/// can hold, and the connection budget a session takes from it by default.
enum DescriptorLimit {
    /// The soft limit now; nil when unlimited or unknown.
    static var soft: Int? {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max else { return nil }
        return Int(clamping: limit.rlim_cur)
    }

    /// Connections a session may hold by default: the soft limit less a reserve for the
    /// process's other descriptors (files, pipes, the loop's own) of an eighth of it, at least
    /// 32; a million when unlimited. At least 1.
    static func defaultConnectionBudget(softLimit: Int? = soft) -> Int {
        guard let softLimit else { return 1 << 20 }
        return min(1 << 20, max(1, softLimit - max(32, softLimit / 8)))
    }
}
