import Testing
@testable import UVNetworking

/// The task lifecycle replayed as event sequences, without sockets.
@Suite struct TaskStateMachineTests {
    @Test func successfulExchangeWalksEveryPhase() {
        var machine = TaskStateMachine(isReplayable: true)
        #expect(machine.state == .idle)
        #expect(machine.resume() == .enqueue(requireFreshConnection: false))
        #expect(machine.state == .waitingForConnection)
        #expect(machine.connectionAssigned() == .none)
        #expect(machine.state == .sending)
        #expect(machine.requestWritten() == .none)
        #expect(machine.state == .awaitingHead)
        #expect(machine.headReceived() == .none)
        #expect(machine.state == .receivingBody)
        #expect(machine.responseEnded() == .succeed)
        #expect(machine.state == .completed)
    }

    /// Runs a fresh machine to the end of a response.
    private func atResponseEnd() -> TaskStateMachine {
        var machine = TaskStateMachine(isReplayable: false)
        _ = machine.resume(); _ = machine.connectionAssigned(); _ = machine.requestWritten(); _ = machine.headReceived()
        return machine
    }

    @Test func redirectIsPlannedThenFollowedAsANewExchange() {
        var machine = atResponseEnd()
        #expect(machine.responseEnded(isRedirectToFollow: true) == .planRedirect)
        #expect(machine.state == .redirecting)
        // Timers that race with the plan do nothing; suspending keeps the task's place.
        #expect(machine.timedOut(.responseHeadTimeout) == .none)
        #expect(machine.timedOut(.idleTimeout) == .none)
        #expect(machine.suspend() == .none)
        #expect(machine.followRedirect(isReplayable: true) == .enqueue(requireFreshConnection: false))
        #expect(machine.state == .waitingForConnection)
        #expect(machine.isReplayable)
        // A second plan result (there is none in practice) changes nothing.
        #expect(machine.followRedirect(isReplayable: false) == .none)
        #expect(machine.deliverRedirect() == .none)
    }

    @Test func redirectDeliveredOrFailedEndsTheTaskOnce() {
        var delivered = atResponseEnd()
        _ = delivered.responseEnded(isRedirectToFollow: true)
        #expect(delivered.deliverRedirect() == .succeed)
        #expect(delivered.state == .completed)
        #expect(delivered.redirectFailed(.tooManyRedirects) == .none)

        var failed = atResponseEnd()
        _ = failed.responseEnded(isRedirectToFollow: true)
        #expect(failed.redirectFailed(.redirectCycle) == .fail(.redirectCycle))
        #expect(failed.state == .failed)
        #expect(failed.followRedirect(isReplayable: true) == .none)
    }

    @Test func cancelWhileRedirectingWinsOverThePlan() {
        var machine = atResponseEnd()
        _ = machine.responseEnded(isRedirectToFollow: true)
        #expect(machine.cancel() == .fail(.cancelled))
        #expect(machine.followRedirect(isReplayable: true) == .none)
        #expect(machine.state == .cancelled)
    }

    @Test func terminalStatesIgnoreEverythingSoCompletionIsExactlyOnce() {
        var machine = TaskStateMachine(isReplayable: true)
        _ = machine.resume(); _ = machine.connectionAssigned(); _ = machine.requestWritten(); _ = machine.headReceived()
        #expect(machine.responseEnded() == .succeed)
        #expect(machine.cancel() == .none)
        #expect(machine.timedOut(.requestTimeout) == .none)
        #expect(machine.exchangeFailed(.connectionReset, onReusedConnection: false, responseStarted: true) == .none)
        #expect(machine.responseEnded() == .none)
        #expect(machine.state == .completed)
    }

    @Test func cancelBeforeResumeFailsOnceAndResumeDoesNothingAfter() {
        var machine = TaskStateMachine(isReplayable: true)
        #expect(machine.cancel() == .fail(.cancelled))
        #expect(machine.state == .cancelled)
        #expect(machine.resume() == .none)
        #expect(machine.cancel() == .none)
    }

    @Test func cancelWhileWaitingAndWhileReceiving() {
        var waiting = TaskStateMachine(isReplayable: true)
        _ = waiting.resume()
        #expect(waiting.cancel() == .fail(.cancelled))

        var receiving = TaskStateMachine(isReplayable: true)
        _ = receiving.resume(); _ = receiving.connectionAssigned(); _ = receiving.requestWritten(); _ = receiving.headReceived()
        #expect(receiving.cancel() == .fail(.cancelled))
        #expect(receiving.responseEnded() == .none)
    }

    @Test func suspendWhileRunningPausesReadingAndResumeRestartsIt() {
        var machine = TaskStateMachine(isReplayable: true)
        _ = machine.resume(); _ = machine.connectionAssigned(); _ = machine.requestWritten()
        #expect(machine.suspend() == .pauseReading)
        #expect(machine.suspend() == .none)
        #expect(machine.resume() == .resumeReading)
        #expect(machine.resume() == .none)
    }

    @Test func suspendedWhileQueuedPausesAsSoonAsItGetsAConnection() {
        var machine = TaskStateMachine(isReplayable: true)
        _ = machine.resume()
        #expect(machine.suspend() == .none)
        #expect(machine.connectionAssigned() == .pauseReading)
    }

    @Test func staleReusedConnectionIsRetriedOnceOnAFreshOne() {
        var machine = TaskStateMachine(isReplayable: true)
        _ = machine.resume(); _ = machine.connectionAssigned(); _ = machine.requestWritten()
        #expect(machine.exchangeFailed(.connectionClosed, onReusedConnection: true, responseStarted: false)
                == .enqueue(requireFreshConnection: true))
        #expect(machine.state == .waitingForConnection)
        _ = machine.connectionAssigned(); _ = machine.requestWritten()
        // The second failure is final, even on a reused connection.
        #expect(machine.exchangeFailed(.connectionClosed, onReusedConnection: true, responseStarted: false) == .fail(.connectionClosed))
    }

    @Test func noRetryOnAFreshConnectionAfterResponseBytesOrForUnsafeMethods() {
        var fresh = TaskStateMachine(isReplayable: true)
        _ = fresh.resume(); _ = fresh.connectionAssigned(); _ = fresh.requestWritten()
        #expect(fresh.exchangeFailed(.connectionClosed, onReusedConnection: false, responseStarted: false) == .fail(.connectionClosed))

        var started = TaskStateMachine(isReplayable: true)
        _ = started.resume(); _ = started.connectionAssigned(); _ = started.requestWritten()
        #expect(started.exchangeFailed(.connectionReset, onReusedConnection: true, responseStarted: true) == .fail(.connectionReset))

        var post = TaskStateMachine(isReplayable: false)
        _ = post.resume(); _ = post.connectionAssigned(); _ = post.requestWritten()
        #expect(post.exchangeFailed(.connectionClosed, onReusedConnection: true, responseStarted: false) == .fail(.connectionClosed))

        var timeout = TaskStateMachine(isReplayable: true)
        _ = timeout.resume(); _ = timeout.connectionAssigned(); _ = timeout.requestWritten()
        #expect(timeout.exchangeFailed(.malformedResponse, onReusedConnection: true, responseStarted: false) == .fail(.malformedResponse))
    }

    @Test func lateTimersForAnEarlierPhaseAreIgnored() {
        var machine = TaskStateMachine(isReplayable: true)
        _ = machine.resume(); _ = machine.connectionAssigned(); _ = machine.requestWritten(); _ = machine.headReceived()
        #expect(machine.timedOut(.responseHeadTimeout) == .none)
        #expect(machine.timedOut(.idleTimeout) == .fail(.idleTimeout))

        var waiting = TaskStateMachine(isReplayable: true)
        _ = waiting.resume()
        #expect(waiting.timedOut(.idleTimeout) == .none)
        #expect(waiting.timedOut(.requestTimeout) == .fail(.requestTimeout))
    }

    @Test func connectFailureFailsOnlyAWaitingTask() {
        var machine = TaskStateMachine(isReplayable: true)
        #expect(machine.connectFailed(.connectionRefused) == .none)
        _ = machine.resume()
        #expect(machine.connectFailed(.connectionRefused) == .fail(.connectionRefused))
        #expect(machine.state == .failed)
    }

    @Test func invalidationCancelsRunningTasksAndRejectsNewOnes() {
        var running = TaskStateMachine(isReplayable: true)
        _ = running.resume()
        #expect(running.invalidated(.cancelled) == .fail(.cancelled))
        #expect(running.state == .cancelled)

        var fresh = TaskStateMachine(isReplayable: true)
        #expect(fresh.invalidated(.sessionInvalidated) == .fail(.sessionInvalidated))
        #expect(fresh.state == .failed)
        #expect(fresh.invalidated(.cancelled) == .none)
    }

    @Test func earlyResponseBeforeTheWriteFinishes() {
        var machine = TaskStateMachine(isReplayable: false)
        _ = machine.resume(); _ = machine.connectionAssigned()
        #expect(machine.headReceived() == .none)
        #expect(machine.state == .receivingBody)
        #expect(machine.requestWritten() == .none)
        #expect(machine.responseEnded() == .succeed)
    }
}
