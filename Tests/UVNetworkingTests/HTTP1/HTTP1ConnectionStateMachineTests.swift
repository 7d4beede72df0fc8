import Testing
@testable import UVNetworking

/// Keep-alive decisions of one connection, without sockets.
@Suite struct HTTP1ConnectionStateMachineTests {
    @Test func keepAliveExchangeReturnsToIdle() {
        var machine = HTTP1ConnectionStateMachine()
        #expect(machine.connected() == .connectionReady)
        #expect(machine.execute() == .sendRequest)
        #expect(!machine.isReused)
        #expect(machine.requestWritten() == .none)
        #expect(machine.responseEnded(keepAlive: true) == .exchangeFinished(reusable: true))
        #expect(machine.state == .idle)
        #expect(machine.execute() == .sendRequest)
        #expect(machine.isReused)
    }

    @Test func connectionCloseFromTheServerEndsTheConnection() {
        var machine = HTTP1ConnectionStateMachine()
        _ = machine.connected(); _ = machine.execute(); _ = machine.requestWritten()
        #expect(machine.responseEnded(keepAlive: false) == .exchangeFinished(reusable: false))
        #expect(machine.state == .closed)
    }

    @Test func responseBeforeTheRequestIsWrittenFinishesAfterTheWriteAndIsNotReused() {
        var machine = HTTP1ConnectionStateMachine()
        _ = machine.connected(); _ = machine.execute()
        #expect(machine.responseEnded(keepAlive: true) == .none)
        #expect(machine.requestWritten() == .exchangeFinished(reusable: false))
        #expect(machine.state == .closed)
    }

    @Test func failuresCloseAndFailOnlyAnActiveExchange() {
        var idle = HTTP1ConnectionStateMachine()
        _ = idle.connected()
        #expect(idle.failed(.connectionClosed) == .close)
        #expect(idle.failed(.connectionClosed) == .none)

        var active = HTTP1ConnectionStateMachine()
        _ = active.connected(); _ = active.execute()
        #expect(active.failed(.connectionReset) == .failExchange(.connectionReset))
        #expect(active.requestWritten() == .none)

        var connecting = HTTP1ConnectionStateMachine()
        #expect(connecting.failed(.connectionRefused) == .close)
    }

    @Test func closeRequestIsIdempotent() {
        var machine = HTTP1ConnectionStateMachine()
        _ = machine.connected()
        #expect(machine.closeRequested() == .close)
        #expect(machine.closeRequested() == .none)
        #expect(machine.connected() == .none)
    }
}
