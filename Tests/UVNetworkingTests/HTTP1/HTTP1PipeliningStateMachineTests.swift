import Testing
@testable import UVNetworking

/// Pipelining in one connection's machine: requests written behind the active exchange, their
/// writes and responses taken in order, and what a close leaves unanswered.
@Suite(.tags(.unit)) struct HTTP1PipeliningStateMachineTests {
    /// A connected machine whose first exchange is written and awaits its response.
    private func active() -> HTTP1ConnectionStateMachine {
        var machine = HTTP1ConnectionStateMachine()
        _ = machine.connected(); _ = machine.execute(); _ = machine.writeFinished()
        return machine
    }

    @Test func pipelinedResponsesAreTakenInRequestOrder() {
        var machine = active()
        #expect(machine.acceptsPipelinedRequest)
        #expect(machine.pipeline() == .sendPipelinedRequest)
        #expect(machine.pipeline() == .sendPipelinedRequest)
        #expect(machine.pipelined == 2)
        #expect(machine.writeFinished() == .pipelinedRequestWritten(position: 0))
        #expect(machine.writeFinished() == .pipelinedRequestWritten(position: 1))
        #expect(machine.writeFinished() == .none)
        #expect(machine.responseEnded(keepAlive: true) == .exchangeFinishedWithNext)
        #expect(machine.state == .active(requestWritten: true, responseEnded: false, keepAlive: true))
        #expect(machine.isReused)
        #expect(machine.responseEnded(keepAlive: true) == .exchangeFinishedWithNext)
        #expect(machine.responseEnded(keepAlive: true) == .exchangeFinished(reusable: true))
        #expect(machine.state == .idle)
        #expect(machine.requestCount == 3)
    }

    @Test func aResponseCanEndBeforeTheNextRequestIsWritten() {
        // The kernel may take the second request later than the first response comes back.
        var machine = active()
        _ = machine.pipeline()
        #expect(machine.responseEnded(keepAlive: true) == .exchangeFinishedWithNext)
        #expect(machine.state == .active(requestWritten: false, responseEnded: false, keepAlive: true))
        // Its write finishing now is the active exchange's.
        #expect(machine.writeFinished() == .none)
        #expect(machine.state == .active(requestWritten: true, responseEnded: false, keepAlive: true))
        #expect(machine.responseEnded(keepAlive: true) == .exchangeFinished(reusable: true))
    }

    @Test func connectionCloseLeavesThePipelinedRequestsUnanswered() {
        var machine = active()
        _ = machine.pipeline(); _ = machine.pipeline()
        #expect(machine.responseEnded(keepAlive: false) == .exchangeFinished(reusable: false))
        #expect(machine.state == .closed)
        #expect(machine.pipelined == 0)
        #expect(machine.writeFinished() == .none)
    }

    @Test func failuresAndClosesClearThePipeline() {
        var failing = active()
        _ = failing.pipeline()
        #expect(failing.failed() == .failExchange)
        #expect(failing.pipelined == 0 && failing.pipelinedWritten == 0)

        var closing = active()
        _ = closing.pipeline(); _ = closing.writeFinished()
        #expect(closing.closeRequested() == .close)
        #expect(closing.pipelined == 0 && closing.pipelinedWritten == 0)
    }

    @Test func nothingIsPipelinedBehindAStreamedBodyOrOnAnIdleOrClosedConnection() {
        var idle = HTTP1ConnectionStateMachine()
        _ = idle.connected()
        #expect(!idle.acceptsPipelinedRequest)

        var streaming = HTTP1ConnectionStateMachine()
        _ = streaming.connected(); _ = streaming.execute(streamingBody: true)
        #expect(!streaming.acceptsPipelinedRequest)

        var closed = active()
        _ = closed.closeRequested()
        #expect(!closed.acceptsPipelinedRequest)
    }

    @Test func anEarlyResponseWithRequestsBehindItClosesTheConnection() {
        // The active request is not yet written when its response ends: the stream is out of
        // step, so the pipelined ones go unanswered rather than being read as its successors.
        var machine = HTTP1ConnectionStateMachine()
        _ = machine.connected(); _ = machine.execute()
        _ = machine.pipeline()
        #expect(machine.responseEnded(keepAlive: true) == .exchangeFinished(reusable: false))
        #expect(machine.pipelined == 0)
    }
}
