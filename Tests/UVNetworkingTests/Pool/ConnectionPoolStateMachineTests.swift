import Testing
@testable import UVNetworking

/// The per-origin pool replayed as event sequences, without sockets.
@Suite(.tags(.unit)) struct ConnectionPoolStateMachineTests {
    @Test func firstRequestOpensAConnectionAndRunsOnItWhenReady() {
        var pool = ConnectionPoolStateMachine(maximumConnections: 2)
        #expect(pool.requestArrived(10) == .openConnection(1))
        #expect(pool.connectionEstablished(1) == .execute(10, on: 1))
        #expect(pool.connectionReleased(1) == .parkIdle(1))
        #expect(pool.requestArrived(11) == .execute(11, on: 1))
        #expect(pool.connectionCount == 1)
    }

    @Test func neverMoreThanTheLimitAndWaitersAreFIFO() {
        var pool = ConnectionPoolStateMachine(maximumConnections: 2)
        #expect(pool.requestArrived(1) == .openConnection(1))
        #expect(pool.requestArrived(2) == .openConnection(2))
        #expect(pool.requestArrived(3) == .none)
        #expect(pool.requestArrived(4) == .none)
        #expect(pool.connectionCount == 2)
        #expect(pool.connectionEstablished(2) == .execute(1, on: 2))
        #expect(pool.connectionEstablished(1) == .execute(2, on: 1))
        #expect(pool.connectionReleased(1) == .execute(3, on: 1))
        #expect(pool.connectionReleased(2) == .execute(4, on: 2))
        #expect(pool.connectionReleased(1) == .parkIdle(1))
    }

    @Test func mostRecentlyUsedIdleConnectionIsReusedFirst() {
        var pool = ConnectionPoolStateMachine(maximumConnections: 2)
        _ = pool.requestArrived(1); _ = pool.requestArrived(2)
        _ = pool.connectionEstablished(1); _ = pool.connectionEstablished(2)
        _ = pool.connectionReleased(1); _ = pool.connectionReleased(2)
        #expect(pool.requestArrived(3) == .execute(3, on: 2))
    }

    @Test func closedConnectionMakesRoomForAWaiter() {
        var pool = ConnectionPoolStateMachine(maximumConnections: 1)
        _ = pool.requestArrived(1)
        _ = pool.connectionEstablished(1)
        #expect(pool.requestArrived(2) == .none)
        #expect(pool.connectionClosed(1) == .openConnection(2))
        #expect(pool.connectionEstablished(2) == .execute(2, on: 2))
    }

    @Test func connectFailureFailsTheOldestWaiterAndTriesAgainForTheRest() {
        var pool = ConnectionPoolStateMachine(maximumConnections: 1)
        _ = pool.requestArrived(1)
        _ = pool.requestArrived(2)
        #expect(pool.connectionFailed(1) == .failRequest(1, then: .openConnection(2)))
        #expect(pool.connectionFailed(2) == .failRequest(2, then: .none))
        #expect(pool.isEmpty)
    }

    @Test func cancelledWaiterIsNotServed() {
        var pool = ConnectionPoolStateMachine(maximumConnections: 1)
        _ = pool.requestArrived(1)
        _ = pool.requestArrived(2)
        _ = pool.requestCancelled(1)
        #expect(pool.connectionEstablished(1) == .execute(2, on: 1))
    }

    @Test func retryThatNeedsAFreshConnectionSkipsIdleOnesAndTradesOneWhenFull() {
        var pool = ConnectionPoolStateMachine(maximumConnections: 1)
        _ = pool.requestArrived(1)
        _ = pool.connectionEstablished(1)
        _ = pool.connectionReleased(1)
        #expect(pool.requestArrived(2, requireFresh: true) == .replaceConnection(close: 1, open: 2))
        #expect(pool.connectionClosed(1) == .none)
        #expect(pool.connectionEstablished(2) == .execute(2, on: 2))
    }

    @Test func releasedConnectionIsNotGivenToAWaiterThatNeedsAFreshOne() {
        var pool = ConnectionPoolStateMachine(maximumConnections: 2)
        _ = pool.requestArrived(1)
        _ = pool.connectionEstablished(1)
        #expect(pool.requestArrived(2, requireFresh: true) == .openConnection(2))
        #expect(pool.connectionReleased(1) == .parkIdle(1))
        #expect(pool.connectionEstablished(2) == .execute(2, on: 2))
    }

    // Slots: a connection's number names its slot; numbers are never given twice.

    @Test func aFreedSlotGetsANewNumberNeverAnOldOne() {
        var pool = ConnectionPoolStateMachine(maximumConnections: 3)
        var seen: Set<Int> = []
        for request in 1...30 {
            guard case .openConnection(let id) = pool.requestArrived(request) else {
                Issue.record("request \(request) opened no connection")
                return
            }
            #expect(seen.insert(id).inserted, "number \(id) given twice")
            #expect(pool.slot(of: id) < 3)
            #expect(pool.connectionEstablished(id) == .execute(request, on: id))
            #expect(pool.connectionClosed(id) == .none)
        }
        #expect(pool.connectionCount == 0)
    }

    @Test func aLateEventForAReplacedConnectionDoesNotTouchTheNewOneInItsSlot() {
        var pool = ConnectionPoolStateMachine(maximumConnections: 1)
        _ = pool.requestArrived(1)
        _ = pool.connectionEstablished(1)
        _ = pool.connectionReleased(1)
        #expect(pool.requestArrived(2, requireFresh: true) == .replaceConnection(close: 1, open: 2))
        #expect(pool.slot(of: 1) == pool.slot(of: 2))
        // The old connection's events name its own number: ignored.
        #expect(pool.connectionReleased(1) == .none)
        #expect(pool.connectionEstablished(1) == .none)
        #expect(pool.connectionClosed(1) == .none)
        #expect(pool.connectionCount == 1)
        #expect(pool.connectionEstablished(2) == .execute(2, on: 2))
    }

    @Test func takenIdleConnectionsFreeTheirSlots() {
        var pool = ConnectionPoolStateMachine(maximumConnections: 2)
        _ = pool.requestArrived(1); _ = pool.requestArrived(2)
        _ = pool.connectionEstablished(1); _ = pool.connectionEstablished(2)
        _ = pool.connectionReleased(1); _ = pool.connectionReleased(2)
        #expect(pool.takeIdleConnections().sorted() == [1, 2])
        #expect(pool.connectionCount == 0)
        #expect(pool.connectionClosed(1) == .none)
        // Both slots are free again, each with the next number of its slot.
        let opened = [pool.requestArrived(3), pool.requestArrived(4)]
        #expect(Set(opened.map { "\($0)" }) == ["openConnection(3)", "openConnection(4)"])
        #expect(pool.requestArrived(5) == .none)
    }

    @Test func unknownNumbersAreIgnored() {
        var pool = ConnectionPoolStateMachine(maximumConnections: 2)
        _ = pool.requestArrived(1)
        #expect(pool.connectionEstablished(-5) == .none)
        #expect(pool.connectionReleased(99) == .none)
        #expect(pool.connectionClosed(0) == .none)
        #expect(pool.connectionFailed(2) == .none)
        #expect(pool.connectionCount == 1)
    }
}
