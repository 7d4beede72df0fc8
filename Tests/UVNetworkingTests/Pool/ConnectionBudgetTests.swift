import Testing
@testable import UVNetworking

/// The session's budget across origins replayed as event sequences, without sockets. Pools
/// are numbers; a pool told `.close(victim)` waits, and the victim's close (`released`)
/// grants the unit.
@Suite(.tags(.unit)) struct ConnectionBudgetTests {
    typealias Victim = ConnectionBudget.Victim

    /// Opens connection `connection` of `pool` on a unit already taken, and parks it: its node,
    /// or nil when it must close.
    private func park(_ budget: inout ConnectionBudget, _ pool: Int, _ connection: Int) -> Int? {
        let node = budget.attach(pool, connection)
        return budget.parked(node) ? node : nil
    }

    @Test func opensFreelyBelowTheLimit() {
        var budget = ConnectionBudget(limit: 2)
        #expect(budget.requestOpen(0) == .open)
        #expect(budget.requestOpen(1) == .open)
        #expect(budget.units == 2)
        #expect(budget.released() == .none)
        #expect(budget.units == 1)
    }

    @Test func atTheLimitTheLeastRecentlyUsedIdleConnectionOfAnyPoolGivesWay() {
        var budget = ConnectionBudget(limit: 3)
        for pool in 0..<3 { #expect(budget.requestOpen(pool) == .open) }
        // Idle in the order 1, 0, 2: pool 1's connection is the least recently used.
        let one = park(&budget, 1, 10)
        let zero = park(&budget, 0, 20)
        _ = park(&budget, 2, 30)
        #expect(one != nil && zero != nil)
        // Pool 0 reuses its connection: it is no longer idle, so never a victim.
        budget.unparked(zero!)
        #expect(budget.requestOpen(5) == .close(Victim(pool: 1, connection: 10)))
        // The victim's close hands its unit to the waiting pool.
        #expect(budget.released() == .grant(5))
        #expect(budget.requestOpen(6) == .close(Victim(pool: 2, connection: 30)))
        #expect(budget.released() == .grant(6))
        #expect(budget.units == 3)
        #expect(budget.peakUnits == 3)
    }

    @Test func evictionPicksIdleConnectionsOnly() {
        var budget = ConnectionBudget(limit: 2)
        _ = budget.requestOpen(0); _ = budget.requestOpen(1)
        // Both busy: nobody is closed, the pool waits.
        #expect(budget.requestOpen(2) == .wait)
        #expect(budget.idleCount == 0)
        #expect(budget.units == 2)
    }

    @Test func waitingPoolsAreServedOldestFirstAcrossOrigins() {
        var budget = ConnectionBudget(limit: 1)
        #expect(budget.requestOpen(0) == .open)
        #expect(budget.requestOpen(7) == .wait)
        #expect(budget.requestOpen(3) == .wait)
        #expect(budget.requestOpen(7) == .wait)
        #expect(budget.released() == .grant(7))
        #expect(budget.released() == .grant(3))
        #expect(budget.released() == .grant(7))
        #expect(budget.released() == .none)
        #expect(budget.units == 0)
    }

    @Test func aConnectionGoingIdleWhilePoolsWaitClosesForThem() {
        var budget = ConnectionBudget(limit: 1)
        _ = budget.requestOpen(0)
        #expect(budget.requestOpen(1) == .wait)
        // It would idle, but pool 1 waits: it must close (then its release grants pool 1).
        #expect(park(&budget, 0, 5) == nil)
        #expect(budget.released() == .grant(1))
        #expect(park(&budget, 1, 6) != nil)
    }

    @Test func neverAboveTheBudgetWhateverTheOrder() {
        // A pseudo-random walk of opens, parks, reuses and closes over many pools.
        var budget = ConnectionBudget(limit: 5)
        var seed: UInt64 = 0x2545F4914F6CDD1D
        func next(_ bound: Int) -> Int {
            seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17
            return Int(seed % UInt64(bound))
        }
        var busy: [(pool: Int, connection: Int, node: Int)] = []
        var idle: [(pool: Int, connection: Int, node: Int)] = []
        var waiting = 0
        var connection = 0
        func open(_ pool: Int) { connection += 1; busy.append((pool, connection, budget.attach(pool, connection))) }
        func grant() { open(0); waiting -= 1 }
        for _ in 0..<20_000 {
            switch next(5) {
            case 0:
                let pool = next(50)
                switch budget.requestOpen(pool) {
                case .open: open(pool)
                case .wait: waiting += 1
                case .close(let victim):
                    waiting += 1
                    let index = idle.firstIndex { $0.pool == victim.pool && $0.connection == victim.connection }!
                    // The victim is the least recently used idle connection.
                    #expect(index == 0)
                    budget.detach(idle.remove(at: index).node)
                    if case .grant = budget.released() { grant() }
                default: Issue.record("unexpected answer")
                }
            case 1 where !busy.isEmpty:
                let taken = busy.remove(at: next(busy.count))
                if budget.parked(taken.node) {
                    idle.append(taken)
                } else {
                    budget.detach(taken.node)
                    if case .grant = budget.released() { grant() }
                }
            case 2 where !idle.isEmpty:
                let reused = idle.remove(at: next(idle.count))
                budget.unparked(reused.node)
                busy.append(reused)
            case 3 where !busy.isEmpty:
                budget.detach(busy.remove(at: next(busy.count)).node)
                if case .grant = budget.released() { grant() }
            case 4 where !idle.isEmpty:
                // An idle connection closes (idle timeout, the server).
                budget.detach(idle.remove(at: next(idle.count)).node)
                if case .grant = budget.released() { grant() }
            default: break
            }
            #expect(budget.units <= 5)
            #expect(budget.units == busy.count + idle.count)
            #expect(budget.idleCount == idle.count)
            #expect(budget.waitingCount == waiting)
            // Nobody waits while a connection idles.
            #expect(waiting == 0 || idle.isEmpty)
        }
        #expect(budget.peakUnits == 5)
    }

    @Test func descriptorShortageClosesAnIdleConnectionAndRetriesFirstInLine() {
        var budget = ConnectionBudget(limit: 100)
        for pool in 0..<4 { _ = budget.requestOpen(pool) }
        _ = park(&budget, 1, 11)
        #expect(budget.requestOpen(9) == .open)
        // Pool 3's connect found no descriptor: pool 1's idle connection gives way, and pool 3
        // gets the unit its close frees, before pool 9 that asks meanwhile.
        #expect(budget.descriptorsExhausted(3) == .close(Victim(pool: 1, connection: 11)))
        #expect(budget.requestOpen(9) == .wait)
        // The victim's close.
        #expect(budget.released() == .grant(3))
        // The process holds 4 here: pool 9 waits until another closes.
        #expect(budget.ceiling == 4)
        #expect(budget.units == 4)
        #expect(budget.released() == .grant(9))
    }

    @Test func descriptorShortageWithNothingIdleWaitsAndFailsOnlyWhenNothingIsOpen() {
        var budget = ConnectionBudget(limit: 100)
        _ = budget.requestOpen(0); _ = budget.requestOpen(1)
        #expect(budget.descriptorsExhausted(1) == .wait)
        #expect(budget.ceiling == 1)
        #expect(budget.released() == .grant(1))
        #expect(budget.descriptorsExhausted(1) == .fail)
        #expect(budget.units == 0)
    }

    @Test func theDescriptorCeilingRisesAsConnectionsSucceedAtIt() {
        var budget = ConnectionBudget(limit: 10)
        _ = budget.requestOpen(0); _ = budget.requestOpen(1); _ = budget.requestOpen(2)
        #expect(budget.descriptorsExhausted(2) == .wait)
        #expect(budget.ceiling == 2)
        // A connect succeeded at the ceiling: one more is tried.
        #expect(budget.established() == .grant(2))
        #expect(budget.ceiling == 3)
        #expect(budget.established() == .none)
        #expect(budget.ceiling == 4)
    }

    @Test func theDefaultBudgetLeavesAReserveOfTheDescriptorLimit() {
        #expect(DescriptorLimit.defaultConnectionBudget(softLimit: 1024) == 896)
        #expect(DescriptorLimit.defaultConnectionBudget(softLimit: 64) == 32)
        #expect(DescriptorLimit.defaultConnectionBudget(softLimit: 10) == 1)
        #expect(DescriptorLimit.defaultConnectionBudget(softLimit: nil) == 1 << 20)
        #expect(DescriptorLimit.defaultConnectionBudget(softLimit: 1 << 30) == 1 << 20)
    }
}
