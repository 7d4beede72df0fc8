import Testing
@testable import UVNetworking

/// The session retrier's moves through the task lifecycle, without sockets: a failure or a
/// dropped response leads to `waitingToRetry`, its end to a new exchange; a cancellation is
/// never retried and ends a wait.
@Suite(.tags(.unit)) struct TaskStateMachineRetryTests {
    /// A fresh machine whose request has been written.
    private func awaitingHead() -> TaskStateMachine {
        var machine = TaskStateMachine(isReplayable: true)
        _ = machine.resume(); _ = machine.connectionAssigned(); _ = machine.requestWritten()
        return machine
    }

    @Test func failureThenRetryIsANewExchange() {
        var machine = awaitingHead()
        #expect(machine.exchangeFailed(.connectionReset, onReusedConnection: false, responseStarted: false) == .fail(.connectionReset))
        #expect(machine.state == .failed)
        #expect(machine.retryLater() == true)
        #expect(machine.state == .waitingToRetry)
        #expect(machine.isRunning)
        // Waiting holds nothing: suspend and resume only change the flag, timers do nothing.
        #expect(machine.suspend() == .none)
        #expect(machine.resume() == .none)
        #expect(machine.retryDue() == .enqueue(requireFreshConnection: false))
        #expect(machine.state == .waitingForConnection)
        #expect(machine.retryDue() == .none)
        // The new exchange runs to its end as the first would.
        #expect(machine.connectionAssigned() == .none)
        _ = machine.requestWritten()
        _ = machine.headReceived()
        #expect(machine.responseEnded() == .succeed)
        #expect(machine.retryLater() == false)
    }

    @Test func droppedStatusResponseWaitsAfterItsBody() {
        var machine = awaitingHead()
        #expect(machine.headReceived(.restartDraining) == .none)
        #expect(machine.destination == .restartDraining)
        #expect(machine.responseEnded() == .planRestart)
        #expect(machine.state == .redirecting)
        #expect(machine.retryLater() == true)
        #expect(machine.retryDue() == .enqueue(requireFreshConnection: false))
        #expect(machine.destination == .task)
    }

    @Test func cancellationIsNeverRetriedAndEndsAWait() {
        var cancelled = awaitingHead()
        #expect(cancelled.cancel() == .fail(.cancelled))
        #expect(cancelled.retryLater() == false)
        #expect(cancelled.state == .cancelled)

        var waiting = awaitingHead()
        _ = waiting.timedOut(.requestTimeout)
        #expect(waiting.retryLater() == true)
        #expect(waiting.cancel() == .fail(.cancelled))
        #expect(waiting.state == .cancelled)
        #expect(waiting.retryDue() == .none)
    }

    @Test func onlyAFailureOrADroppedResponseCanWait() {
        var idle = TaskStateMachine(isReplayable: true)
        #expect(idle.retryLater() == false)
        var running = awaitingHead()
        #expect(running.retryLater() == false)
        _ = running.headReceived()
        #expect(running.responseEnded() == .succeed)
        #expect(running.retryLater() == false)
        #expect(running.state == .completed)
    }

    @Test func aWaitingTaskIsEndedByTheSession() {
        var machine = awaitingHead()
        _ = machine.exchangeFailed(.connectionClosed, onReusedConnection: false, responseStarted: true)
        #expect(machine.retryLater() == true)
        #expect(machine.invalidated(.sessionInvalidated) == .fail(.sessionInvalidated))
        #expect(machine.state == .failed)
        #expect(machine.retryDue() == .none)
    }
}
