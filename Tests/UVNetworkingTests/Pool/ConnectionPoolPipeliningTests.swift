import Testing
@testable import UVNetworking

/// Where the pool pipelines: only requests that allow it, only when no connection has room and
/// no more may open, onto the least loaded connection that offered it, never behind a request
/// that does not allow it, and never again for an origin that misbehaved.
@Suite(.tags(.unit)) struct ConnectionPoolPipeliningTests {
    /// Two open connections (1 and 2), each running one exchange that allows pipelining and
    /// each offering a depth of 3.
    private func busyPool() -> ConnectionPoolStateMachine {
        var pool = ConnectionPoolStateMachine(maximumConnections: 2)
        _ = pool.requestArrived(1, mayPipeline: true); _ = pool.requestArrived(2, mayPipeline: true)
        _ = pool.connectionEstablished(1); _ = pool.connectionEstablished(2)
        _ = pool.pipelineDepthChanged(1, to: 3); _ = pool.pipelineDepthChanged(2, to: 3)
        return pool
    }

    @Test func aFullPoolPipelinesOntoTheLeastLoadedConnection() {
        var pool = busyPool()
        #expect(pool.requestArrived(3, mayPipeline: true) == .executePipelined(3, on: 1))
        #expect(pool.requestArrived(4, mayPipeline: true) == .executePipelined(4, on: 2))
        #expect(pool.requestArrived(5, mayPipeline: true) == .executePipelined(5, on: 1))
        #expect(pool.requestArrived(6, mayPipeline: true) == .executePipelined(6, on: 2))
        // Both carry their depth: the next one waits.
        #expect(pool.requestArrived(7, mayPipeline: true) == .none)
        #expect(pool.activeCount(of: 1) == 3 && pool.activeCount(of: 2) == 3)
        // A response ends: the waiter takes the room it leaves.
        #expect(pool.connectionReleased(2) == .executePipelined(7, on: 2))
    }

    @Test func requestsThatDoNotAllowItWaitForAConnectionOfTheirOwn() {
        var pool = busyPool()
        #expect(pool.requestArrived(3) == .none)
        #expect(pool.requestArrived(4, mayPipeline: true) == .executePipelined(4, on: 1))
        // Connection 2 ends its exchange: the oldest waiter, which does not pipeline, takes it.
        #expect(pool.connectionReleased(2) == .execute(3, on: 2))
        // Nothing is pipelined behind it, even with room.
        #expect(pool.requestArrived(5, mayPipeline: true) == .executePipelined(5, on: 1))
        #expect(pool.requestArrived(6, mayPipeline: true) == .none)
        #expect(pool.nextExchange(on: 2) == .none)
    }

    @Test func aPoolWithRoomOpensAConnectionRatherThanPipelining() {
        var pool = ConnectionPoolStateMachine(maximumConnections: 2)
        _ = pool.requestArrived(1, mayPipeline: true)
        _ = pool.connectionEstablished(1)
        _ = pool.pipelineDepthChanged(1, to: 4)
        #expect(pool.requestArrived(2, mayPipeline: true) == .openConnection(2))
    }

    @Test func anOfferFillsTheConnectionWithWaitersThatAllowIt() {
        var pool = ConnectionPoolStateMachine(maximumConnections: 1)
        _ = pool.requestArrived(1, mayPipeline: true)
        _ = pool.connectionEstablished(1)
        _ = pool.requestArrived(2, mayPipeline: true)
        _ = pool.requestArrived(3)
        _ = pool.requestArrived(4, mayPipeline: true)
        _ = pool.requestArrived(5, mayPipeline: true)
        #expect(pool.pipelinableWaiterCount == 3)
        // The first response ended on HTTP/1.1 keep-alive: the release gives the oldest waiter
        // the idle connection, then the offer pipelines those that allow it behind it.
        #expect(pool.connectionReleased(1) == .execute(2, on: 1))
        #expect(pool.pipelineDepthChanged(1, to: 3) == .executePipelined(4, on: 1))
        #expect(pool.nextExchange(on: 1) == .executePipelined(5, on: 1))
        #expect(pool.nextExchange(on: 1) == .none)
        #expect(pool.pipelinableWaiterCount == 0)
        #expect(pool.connectionReleased(1) == .none)
        #expect(pool.connectionReleased(1) == .none)
        // Idle again: the request that does not pipeline gets it.
        #expect(pool.connectionReleased(1) == .execute(3, on: 1))
    }

    @Test func theOldestWaiterThatAllowsItTakesAFreedPlace() {
        var pool = busyPool()
        for id in 3...6 { _ = pool.requestArrived(id, mayPipeline: true) }
        _ = pool.requestArrived(7, mayPipeline: true)
        _ = pool.requestArrived(8, mayPipeline: true)
        // Connection 1's first response ends: two more remain on it, and waiter 7 takes the place.
        #expect(pool.connectionReleased(1) == .executePipelined(7, on: 1))
        #expect(pool.activeCount(of: 1) == 3)
    }

    @Test func aWithdrawnOfferAndAMisbehavingOriginStopPipelining() {
        var withdrawn = busyPool()
        _ = withdrawn.pipelineDepthChanged(1, to: 0)
        #expect(withdrawn.requestArrived(3, mayPipeline: true) == .executePipelined(3, on: 2))
        #expect(withdrawn.requestArrived(4, mayPipeline: true) == .executePipelined(4, on: 2))
        #expect(withdrawn.requestArrived(5, mayPipeline: true) == .none)

        var misbehaved = busyPool()
        misbehaved.pipeliningMisbehaved()
        #expect(misbehaved.requestArrived(3, mayPipeline: true) == .none)
        #expect(misbehaved.connectionReleased(1) == .execute(3, on: 1))
        #expect(misbehaved.nextExchange(on: 1) == .none)
    }

    @Test func aClosedConnectionForgetsItsOfferAndCancelledWaitersAreUncounted() {
        var pool = busyPool()
        _ = pool.pipelineDepthChanged(2, to: 0)
        #expect(pool.requestArrived(3, mayPipeline: true) == .executePipelined(3, on: 1))
        #expect(pool.connectionClosed(1) == .none)
        // Room again: a connection of its own rather than a pipeline.
        #expect(pool.requestArrived(4, mayPipeline: true) == .openConnection(3))
        #expect(pool.connectionEstablished(3) == .execute(4, on: 3))
        // The new connection in the closed one's slot has offered nothing yet.
        #expect(pool.requestArrived(5, mayPipeline: true) == .none)
        #expect(pool.connectionReleased(3) == .execute(5, on: 3))
        var waiting = busyPool()
        for id in 3...6 { _ = waiting.requestArrived(id, mayPipeline: true) }
        _ = waiting.requestArrived(7, mayPipeline: true)
        #expect(waiting.pipelinableWaiterCount == 1)
        _ = waiting.requestCancelled(7)
        #expect(waiting.pipelinableWaiterCount == 0)
    }
}
