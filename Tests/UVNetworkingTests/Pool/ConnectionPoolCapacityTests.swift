import Testing
@testable import UVNetworking

/// The pool with connections that carry several exchanges at once (HTTP/2 streams), replayed as
/// event sequences without sockets, beside HTTP/1.1 connections that carry one.
@Suite(.tags(.unit)) struct ConnectionPoolCapacityTests {
    /// Drains `nextExchange(on:)`: the requests that also went to `connection`.
    private func more(_ pool: inout ConnectionPoolStateMachine, on connection: Int) -> [Int] {
        var requests: [Int] = []
        while case .execute(let request, connection) = pool.nextExchange(on: connection) { requests.append(request) }
        return requests
    }

    @Test func anHTTP2ConnectionTakesEveryWaiterItHasStreamsFor() {
        var pool = ConnectionPoolStateMachine(maximumConnections: 4)
        #expect(pool.requestArrived(1) == .openConnection(1))
        // Before the origin answered, each waiter may need a connection of its own.
        #expect(pool.requestArrived(2) == .openConnection(2))
        #expect(pool.connectionEstablished(1, capacity: 100) == .execute(1, on: 1))
        #expect(more(&pool, on: 1) == [2])
        // The second connection is no longer needed by anyone: it parks when it comes.
        #expect(pool.connectionEstablished(2, capacity: 100) == .parkIdle(2))
        #expect(pool.requestArrived(3) == .execute(3, on: 1), "the busiest connection with room first")
        #expect(pool.activeCount(of: 1) == 3)
    }

    @Test func onceTheOriginSpokeHTTP2ABurstOpensOneConnection() {
        var pool = ConnectionPoolStateMachine(maximumConnections: 8)
        _ = pool.requestArrived(1)
        _ = pool.connectionEstablished(1, capacity: 50)
        _ = pool.connectionReleased(1)
        #expect(pool.connectionClosed(1) == .none)
        guard case .openConnection(let second) = pool.requestArrived(2) else {
            Issue.record("no connection opened")
            return
        }
        for request in 3...51 { #expect(pool.requestArrived(request) == .none, "request \(request)") }
        guard case .openConnection = pool.requestArrived(52) else {
            Issue.record("the 52nd needs more streams than one connection has")
            return
        }
        #expect(pool.connectionEstablished(second, capacity: 50) == .execute(2, on: second))
        #expect(more(&pool, on: second) == Array(3...51))
        #expect(pool.activeCount(of: second) == 50)
    }

    @Test func priorKnowledgeCountsAConnectionBeingOpenedForItsStreams() {
        var pool = ConnectionPoolStateMachine(maximumConnections: 8, expectedCapacity: 100)
        #expect(pool.requestArrived(1) == .openConnection(1))
        for request in 2...100 { #expect(pool.requestArrived(request) == .none) }
        #expect(pool.connectionEstablished(1, capacity: 100) == .execute(1, on: 1))
        #expect(more(&pool, on: 1).count == 99)
    }

    @Test func aSecondConnectionOpensOnlyWhenStreamsRunOut() {
        var pool = ConnectionPoolStateMachine(maximumConnections: 2)
        _ = pool.requestArrived(1)
        _ = pool.connectionEstablished(1, capacity: 2)
        #expect(pool.requestArrived(2) == .execute(2, on: 1))
        #expect(pool.requestArrived(3) == .openConnection(2))
        #expect(pool.connectionEstablished(2, capacity: 2) == .execute(3, on: 2))
        #expect(pool.requestArrived(4) == .execute(4, on: 2))
        #expect(pool.requestArrived(5) == .none, "both full, at the connection limit")
        #expect(pool.connectionReleased(1) == .execute(5, on: 1))
    }

    @Test func lessRoomStopsNewStreamsUntilRunningOnesEnd() {
        var pool = ConnectionPoolStateMachine(maximumConnections: 1)
        _ = pool.requestArrived(1)
        _ = pool.connectionEstablished(1, capacity: 3)
        _ = pool.requestArrived(2)
        _ = pool.requestArrived(3)
        #expect(pool.capacityChanged(1, to: 1) == .none)
        #expect(pool.requestArrived(4) == .none)
        #expect(pool.connectionReleased(1) == .none, "two run, one allowed")
        #expect(pool.connectionReleased(1) == .none, "one runs, one allowed")
        #expect(pool.connectionReleased(1) == .execute(4, on: 1))
        #expect(pool.capacityChanged(1, to: 0) == .none)
        #expect(pool.requestArrived(5) == .none)
        #expect(pool.capacityChanged(1, to: 10) == .execute(5, on: 1))
    }

    @Test func moreRoomServesTheWaiters() {
        var pool = ConnectionPoolStateMachine(maximumConnections: 1)
        _ = pool.requestArrived(1)
        _ = pool.connectionEstablished(1, capacity: 1)
        for request in 2...4 { #expect(pool.requestArrived(request) == .none) }
        #expect(pool.capacityChanged(1, to: 3) == .execute(2, on: 1))
        #expect(more(&pool, on: 1) == [3])
        #expect(pool.waiterCount == 1)
    }

    @Test func aDrainingConnectionTakesNothingNewAndClosesAfterItsLastStream() {
        var pool = ConnectionPoolStateMachine(maximumConnections: 2)
        _ = pool.requestArrived(1)
        _ = pool.connectionEstablished(1, capacity: 10)
        _ = pool.requestArrived(2)
        #expect(pool.connectionDraining(1) == .none)
        #expect(pool.requestArrived(3) == .openConnection(2))
        #expect(pool.connectionReleased(1) == .none)
        #expect(pool.connectionReleased(1) == .closeConnection(1))
        #expect(pool.connectionCount == 1)
        #expect(pool.connectionEstablished(2, capacity: 10) == .execute(3, on: 2))
        // The closed connection's own report comes after: ignored.
        #expect(pool.connectionClosed(1) == .none)
    }

    @Test func anIdleConnectionThatDrainsClosesAtOnce() {
        var pool = ConnectionPoolStateMachine(maximumConnections: 1)
        _ = pool.requestArrived(1)
        _ = pool.connectionEstablished(1, capacity: 10)
        #expect(pool.connectionReleased(1) == .parkIdle(1))
        #expect(pool.connectionDraining(1) == .closeConnection(1))
        #expect(pool.requestArrived(2) == .openConnection(2))
    }

    @Test func waitersForADrainingConnectionGetANewOne() {
        var pool = ConnectionPoolStateMachine(maximumConnections: 2)
        _ = pool.requestArrived(1)
        _ = pool.connectionEstablished(1, capacity: 1)
        #expect(pool.requestArrived(2) == .openConnection(2))
        #expect(pool.requestArrived(3) == .none)
        #expect(pool.connectionDraining(1) == .none, "one connection opens already for the two waiters at capacity 1: room for no other")
    }

    @Test func http1AndHTTP2ConnectionsOfOneOriginMix() {
        // An origin behind a balancer may answer one connection with h2 and another with
        // http/1.1: each is used for what it carries.
        var pool = ConnectionPoolStateMachine(maximumConnections: 2)
        _ = pool.requestArrived(1)
        _ = pool.requestArrived(2)
        #expect(pool.connectionEstablished(1, capacity: 1) == .execute(1, on: 1))
        #expect(pool.connectionEstablished(2, capacity: 2) == .execute(2, on: 2))
        #expect(pool.requestArrived(3) == .execute(3, on: 2), "streams gather on the connection that has some")
        #expect(pool.connectionReleased(1) == .parkIdle(1))
        #expect(pool.requestArrived(4) == .execute(4, on: 1), "the HTTP/2 one is full")
        #expect(pool.connectionReleased(2) == .none)
        #expect(pool.requestArrived(5) == .execute(5, on: 2))
    }

    @Test func takeIdleLeavesConnectionsWithStreams() {
        var pool = ConnectionPoolStateMachine(maximumConnections: 2)
        _ = pool.requestArrived(1)
        _ = pool.requestArrived(2)
        _ = pool.connectionEstablished(1, capacity: 5)
        _ = more(&pool, on: 1)
        _ = pool.connectionEstablished(2, capacity: 5)
        #expect(pool.idleCount == 1)
        #expect(pool.takeIdleConnections() == [2])
        #expect(pool.connectionCount == 1)
        #expect(pool.activeCount(of: 1) == 2)
    }
}
