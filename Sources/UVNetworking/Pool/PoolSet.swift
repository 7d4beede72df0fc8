import DequeModule

/// What a session engine's pools share: the connection budget across origins
/// (`ConnectionBudget`, performed here) and the dropping of pools left empty. Loop-confined; one
/// per `SessionEngine`, never global.
///
/// Pools are numbered here (a slot in `pools`, reused once the pool is dropped) so that the
/// budget names them with an integer. A pool holds its set strongly and the set holds its
/// pools; `drop` and `closeAll` end that cycle.
///
/// Dropping: a pool with no connection and no waiter is noted with the time it emptied; once
/// `dropDelay` passed and it is still empty, it leaves the set and `onDrop` tells the engine,
/// which forgets it. The delay is constant, so the notes are in time order: a deque and one
/// timer, armed only while notes exist.
final class PoolSet {
    private let loop: EventLoop
    @exclusivity(unchecked) private(set) var budget: ConnectionBudget
    /// Indexed by pool number.
    @exclusivity(unchecked) private var pools: [ConnectionPool?] = []
    @exclusivity(unchecked) private var freeNumbers: [Int] = []
    @exclusivity(unchecked) private(set) var poolCount = 0
    /// Milliseconds an empty pool is kept.
    let dropDelay: UInt64
    @exclusivity(unchecked) private var emptied = Deque<(pool: ConnectionPool, at: UInt64)>()
    @exclusivity(unchecked) private var dropTimer: LoopTimer?
    /// The drop timer closed from inside its own callback, kept until that callback returned.
    @exclusivity(unchecked) private var retiredDropTimer: LoopTimer?
    @exclusivity(unchecked) private(set) var isClosed = false
    /// Told when a pool was dropped (the engine forgets it).
    var onDrop: ((ConnectionPool) -> Void)?

    /// - Parameters:
    ///   - maximumConnections: the budget across all pools.
    ///   - dropDelay: seconds an empty pool is kept (the idle connection timeout); infinite
    ///     keeps it a minute, so that memory stays bounded even then.
    init(loop: EventLoop, maximumConnections: Int, dropDelay: Double) {
        self.loop = loop
        budget = ConnectionBudget(limit: maximumConnections)
        let delay = LoopDuration.clamped(dropDelay)
        // At least a millisecond: a pool noted again at once is looked at in a later iteration.
        self.dropDelay = delay == .max ? 60_000 : max(1, delay)
    }

    // MARK: Pools

    /// Numbers `pool` and keeps it.
    func add(_ pool: ConnectionPool) -> Int {
        poolCount += 1
        if let number = freeNumbers.popLast() {
            pools[number] = pool
            return number
        }
        pools.append(pool)
        return pools.count - 1
    }

    /// `pool` has no connection and no waiter since `at` (loop milliseconds).
    func poolEmptied(_ pool: ConnectionPool, at: UInt64) {
        guard !isClosed else { return }
        emptied.append((pool, at))
        if dropTimer == nil {
            retiredDropTimer = nil
            dropTimer = LoopTimer(loop: loop) { [unowned self] in self.dropExpired() }
            dropTimer!.arm(at: LoopDuration.deadline(at, plus: dropDelay))
        }
    }

    private func dropExpired() {
        let now = LoopTimer.now(loop)
        while let first = emptied.first {
            let due = LoopDuration.deadline(first.at, plus: dropDelay)
            if due > now {
                dropTimer?.arm(at: due)
                return
            }
            emptied.removeFirst()
            // Used again since, or emptied again later (a later note covers it): kept.
            let pool = first.pool
            guard pool.emptiedAt == first.at, pool.isEmpty, !pool.isDropped else { continue }
            // Its pacer still spaces the next start from the last one: asked again later.
            if pool.mayDrop { drop(pool) } else { pool.noteEmpty() }
        }
        // Nothing left to watch: no handle kept. Closed from inside its own callback, so kept
        // until later.
        dropTimer?.close()
        retiredDropTimer = dropTimer
        dropTimer = nil
    }

    private func drop(_ pool: ConnectionPool) {
        pools[pool.number] = nil
        freeNumbers.append(pool.number)
        poolCount -= 1
        pool.dropped()
        onDrop?(pool)
    }

    // MARK: The budget

    /// `pool` wants to open a connection: true when it may at once; otherwise it waits for
    /// `poolGranted` (after an idle connection elsewhere closes, or any connection closes).
    func requestOpen(_ pool: ConnectionPool) -> Bool {
        guard !isClosed else { return false }
        switch budget.requestOpen(pool.number) {
        case .open: return true
        case .close(let victim): evict(victim)
        default: break
        }
        return false
    }

    /// Connection `connection` of `pool` opens: its node in the budget, for its life.
    func attach(_ pool: ConnectionPool, connection: Int) -> ConnectionBudget.IdleNode {
        budget.attach(pool.number, connection)
    }

    /// The connection at `node` is gone (before `released`, or for a retried connect).
    func detach(_ node: ConnectionBudget.IdleNode) {
        guard !isClosed else { return }
        budget.detach(node)
    }

    /// The connection at `node` would idle: false when it must close instead (a pool waits
    /// for the unit it holds). Never called once closed: pools then drain.
    @inline(__always)
    func parked(_ node: ConnectionBudget.IdleNode) -> Bool {
        !closesIdleConnections && budget.parked(node)
    }

    /// The session is draining (SessionDrain.swift): a connection whose exchange ends closes
    /// instead of idling; busy ones still serve their pool's waiters.
    @exclusivity(unchecked) private(set) var closesIdleConnections = false

    /// Closes every idle connection now, and from here on each one that would idle.
    func closeIdleConnections() {
        closesIdleConnections = true
        for case let pool? in pools { pool.closeIdleConnections() }
    }

    /// The connection at `node` is reused: off the idle list if it is on it (a connection that
    /// the pool's machine hands a request without going through the pool's fast path).
    func unparkedIfParked(_ node: ConnectionBudget.IdleNode) {
        if !isClosed && budget.isParked(node) { budget.unparked(node) }
    }

    /// The idle connection at `node` is reused.
    @inline(__always)
    func unparked(_ node: ConnectionBudget.IdleNode) {
        budget.unparked(node)
    }

    /// A connection holding a unit is gone, or its pool no longer needs the unit granted.
    func released() {
        guard !isClosed else { return }
        serve(budget.released())
    }

    /// A connection was established.
    func established() {
        guard !isClosed, budget.descriptorCeiling != nil else { return }
        serve(budget.established())
    }

    /// A connect of `pool` failed for want of a descriptor; its unit is given back. True when
    /// the pool waits (first in line) for a connection to close; false when nothing of the
    /// session is open to give way.
    func descriptorsExhausted(_ pool: ConnectionPool) -> Bool {
        guard !isClosed else { return false }
        switch budget.descriptorsExhausted(pool.number) {
        case .fail: return false
        case .close(let victim): evict(victim)
        default: break
        }
        return true
    }

    /// Hands granted units on; a pool that no longer needs its unit gives it straight back.
    private func serve(_ action: ConnectionBudget.Action) {
        var action = action
        while case .grant(let number) = action {
            guard let pool = pools[number], pool.takeGrant() else {
                action = budget.released()
                continue
            }
            return
        }
    }

    /// Closes an idle connection the budget chose; its close releases the unit it held.
    private func evict(_ victim: ConnectionBudget.Victim) {
        guard let pool = pools[victim.pool], pool.evict(victim.connection) else {
            // Not found: its unit must still go round, or the pool that waits for it waits forever.
            preconditionFailure("budget named an unknown idle connection \(victim)")
        }
    }

    /// Closes every pool now (the engine is done); the set takes nothing afterwards.
    func closeAll() {
        isClosed = true
        dropTimer?.close()
        dropTimer = nil
        emptied.removeAll()
        let all = pools
        pools.removeAll()
        freeNumbers.removeAll()
        poolCount = 0
        for case let pool? in all { pool.closeAll() }
    }

    /// Open or opening connections (granted units) across the set.
    var connectionCount: Int { budget.units }
}
