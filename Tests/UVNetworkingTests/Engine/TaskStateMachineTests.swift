import Testing
@testable import UVNetworking

/// The task lifecycle replayed as event sequences, without sockets.
@Suite(.tags(.unit)) struct TaskStateMachineTests {
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

    /// Runs a fresh machine to a followed redirect's body, planned and being drained.
    private func drainingRedirect() -> TaskStateMachine {
        var machine = TaskStateMachine(isReplayable: false)
        _ = machine.resume(); _ = machine.connectionAssigned(); _ = machine.requestWritten()
        #expect(machine.headReceived(.redirectPlanning) == .startRedirectPlan)
        #expect(machine.redirectPlanArrived(.follow(drainable: true)) == .drainRedirectBody(read: true))
        return machine
    }

    @Test func redirectIsPlannedThenFollowedAsANewExchange() {
        var machine = drainingRedirect()
        #expect(machine.responseEnded() == .planRedirect)
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
        var delivered = drainingRedirect()
        _ = delivered.responseEnded()
        #expect(delivered.deliverRedirect() == .succeed)
        #expect(delivered.state == .completed)
        #expect(delivered.redirectFailed(.tooManyRedirects) == .none)

        var failed = drainingRedirect()
        _ = failed.responseEnded()
        #expect(failed.redirectFailed(.redirectCycle) == .fail(.redirectCycle))
        #expect(failed.state == .failed)
        #expect(failed.followRedirect(isReplayable: true) == .none)
    }

    @Test func cancelWhileRedirectingWinsOverThePlan() {
        var machine = drainingRedirect()
        _ = machine.responseEnded()
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

    @Test func aRequestTheServerNeverProcessedIsReplayedWhateverItsMethodBoundedly() {
        // HTTP/2: a stream above a GOAWAY's last stream id, or refused with REFUSED_STREAM.
        var post = TaskStateMachine(isReplayable: false)
        _ = post.resume()
        let unprocessed = ExchangeFailureContext(onReusedConnection: false, responseStarted: false, neverProcessed: true)
        for _ in 0..<TaskStateMachine.maximumUnprocessedReplays {
            _ = post.connectionAssigned(); _ = post.requestWritten()
            #expect(post.exchangeFailed(.connectionClosed, context: unprocessed) == .enqueue(requireFreshConnection: false))
            #expect(post.state == .waitingForConnection)
        }
        _ = post.connectionAssigned(); _ = post.requestWritten()
        #expect(post.exchangeFailed(.connectionClosed, context: unprocessed) == .fail(.connectionClosed), "a server that refuses everything ends it")

        // From a connection that served other streams, replays are not counted: the server
        // makes progress.
        var busy = TaskStateMachine(isReplayable: false)
        _ = busy.resume()
        let progressing = ExchangeFailureContext(onReusedConnection: true, responseStarted: false, neverProcessed: true,
                                                 connectionMadeProgress: true)
        for _ in 0..<(3 * TaskStateMachine.maximumUnprocessedReplays) {
            _ = busy.connectionAssigned(); _ = busy.requestWritten()
            #expect(busy.exchangeFailed(.connectionClosed, context: progressing) == .enqueue(requireFreshConnection: false))
        }

        // Once the head arrived, the server did process it.
        var started = TaskStateMachine(isReplayable: true)
        _ = started.resume(); _ = started.connectionAssigned(); _ = started.requestWritten(); _ = started.headReceived()
        #expect(started.exchangeFailed(.connectionReset, context: unprocessed) == .fail(.connectionReset))
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

    // MARK: What happens to a response while it arrives

    /// A machine whose request is written, waiting for the head.
    private func awaitingHead(replayable: Bool = true) -> TaskStateMachine {
        var machine = TaskStateMachine(isReplayable: replayable)
        _ = machine.resume(); _ = machine.connectionAssigned(); _ = machine.requestWritten()
        return machine
    }

    @Test func aRedirectsBodyWaitsForItsPlanThenIsDrainedAndTheEndAppliesThePlan() {
        var machine = awaitingHead()
        #expect(machine.headReceived(.redirectPlanning) == .startRedirectPlan)
        #expect(machine.destination == .redirectPlanning)
        #expect(machine.isPausedForConsumer)  // no idle timeout while the plan is made
        #expect(machine.end == .redirectPlan(ended: false))
        // The consumer cannot end a pause that is the plan's; the caller's resume does not read.
        #expect(machine.consumerDrained(stillBehind: false) == .none)
        _ = machine.suspend()
        #expect(machine.resume() == .none)
        #expect(machine.redirectPlanArrived(.follow(drainable: true)) == .drainRedirectBody(read: true))
        #expect(machine.destination == .redirectDraining)
        #expect(!machine.isPausedForConsumer)
        #expect(machine.end == .none)
        #expect(machine.responseEnded() == .planRedirect)
        #expect(machine.state == .redirecting)
        #expect(machine.followRedirect(isReplayable: true) == .enqueue(requireFreshConnection: false))
        #expect(machine.destination == .task)
    }

    @Test func aRedirectWhoseResponseEndsWhilePlannedReleasesTheConnectionAndWaits() {
        var machine = awaitingHead()
        _ = machine.headReceived(.redirectPlanning)
        #expect(machine.responseEnded() == .releaseConnection)
        #expect(machine.state == .receivingBody)
        #expect(machine.end == .redirectPlan(ended: true))
        // The plan applies at once: the body is over.
        #expect(machine.redirectPlanArrived(.follow(drainable: true)) == .planRedirect)
        #expect(machine.state == .redirecting)
    }

    @Test func aRedirectTooLongToDrainOrThatFailsAbandonsItsConnection() {
        var long = awaitingHead()
        _ = long.headReceived(.redirectPlanning)
        #expect(long.redirectPlanArrived(.follow(drainable: false)) == .abandonRedirectBody)
        #expect(long.redirectBodyAbandoned() == .planRedirect)

        var failing = awaitingHead()
        _ = failing.headReceived(.redirectPlanning)
        #expect(failing.redirectPlanArrived(.fail) == .abandonRedirectBody)
        #expect(failing.redirectBodyAbandoned() == .planRedirect)
        #expect(failing.redirectFailed(.tooManyRedirects) == .fail(.tooManyRedirects))
    }

    @Test func aRedirectTheHookDeclinesIsDeliveredWithItsBody() {
        var open = awaitingHead()
        _ = open.headReceived(.redirectPlanning)
        #expect(open.redirectPlanArrived(.deliver) == .deliverRedirectResponse(ended: false))
        #expect(open.destination == .task)
        // Reading stays paused until the kept body is replayed into the sink.
        #expect(open.isPausedForConsumer)
        #expect(open.consumerDrained(stillBehind: false) == .consumerResumed(read: true))
        #expect(open.responseEnded() == .succeed)

        var ended = awaitingHead()
        _ = ended.headReceived(.redirectPlanning)
        _ = ended.responseEnded()
        #expect(ended.redirectPlanArrived(.deliver) == .deliverRedirectResponse(ended: true))
        #expect(!ended.isPausedForConsumer)
        #expect(ended.responseEnded() == .succeed)
    }

    @Test func aPlanThatComesBackAfterTheTaskEndedIsIgnored() {
        var machine = awaitingHead()
        _ = machine.headReceived(.redirectPlanning)
        _ = machine.cancel()
        #expect(machine.redirectPlanArrived(.follow(drainable: true)) == .none)
        #expect(machine.responseEnded() == .none)
    }

    @Test func aRestartsBodyCutShortOrAbandonedStillRestarts() {
        var cut = awaitingHead()
        _ = cut.headReceived(.restartDraining)
        #expect(cut.exchangeFailed(.connectionClosed, onReusedConnection: false, responseStarted: true) == .planRestart)

        var abandoned = awaitingHead()
        _ = abandoned.headReceived(.restartDraining)
        #expect(abandoned.redirectBodyAbandoned() == .planRestart)
        #expect(abandoned.state == .redirecting)
    }

    @Test func aFollowedBodyCutShortGoesOnWithTheRedirectButAPlannedOneFails() {
        var draining = drainingRedirect()
        #expect(draining.exchangeFailed(.connectionReset, onReusedConnection: false, responseStarted: true) == .planRedirect)
        #expect(draining.state == .redirecting)

        var planning = awaitingHead()
        _ = planning.headReceived(.redirectPlanning)
        #expect(planning.exchangeFailed(.connectionReset, onReusedConnection: false, responseStarted: true) == .fail(.connectionReset))
    }

    @Test func aDownloadsRestartDrainsTheResponseThenSendsAgain() {
        var machine = awaitingHead()
        #expect(machine.headReceived(.restartDraining) == .none)
        #expect(machine.destination == .restartDraining)
        #expect(!machine.isPausedForConsumer)
        #expect(machine.responseEnded() == .planRestart)
        #expect(machine.state == .redirecting)
        #expect(machine.followRedirect(isReplayable: true) == .enqueue(requireFreshConnection: false))
        _ = machine.connectionAssigned(); _ = machine.requestWritten()
        #expect(machine.headReceived() == .none)
        #expect(machine.destination == .task)
        #expect(machine.responseEnded() == .succeed)
    }

    @Test func theConsumerPausesReadingAndOnlyItsDrainWhileRunningReadsAgain() {
        var machine = awaitingHead()
        _ = machine.headReceived()
        #expect(machine.consumerBehind() == .pauseReading)
        #expect(machine.consumerBehind() == .none)
        // The caller suspends and resumes while the consumer is behind: still paused.
        #expect(machine.suspend() == .pauseReading)
        #expect(machine.resume() == .none)
        #expect(machine.isPausedForConsumer)
        // A drain notice that is stale (the buffer filled again) changes nothing.
        #expect(machine.consumerDrained(stillBehind: true) == .none)
        // Drained while suspended: the timers restart, but nothing reads until the resume.
        _ = machine.suspend()
        #expect(machine.consumerDrained(stillBehind: false) == .consumerResumed(read: false))
        #expect(!machine.isPausedForConsumer)
        #expect(machine.resume() == .resumeReading)
        #expect(machine.consumerDrained(stillBehind: false) == .none)
    }

    @Test func theHookHoldsTheEndUntilItAllowsTheResponse() {
        var machine = awaitingHead()
        _ = machine.headReceived()
        #expect(machine.hookHeldResponse() == .pauseReading)
        #expect(machine.end == .hook(ended: false))
        // A resume while held does not read; the response's end releases the connection.
        _ = machine.suspend()
        #expect(machine.resume() == .none)
        #expect(machine.responseEnded() == .releaseConnection)
        #expect(machine.state == .receivingBody)
        #expect(machine.hookAllowedResponse() == .succeed)
        #expect(machine.state == .completed)
        #expect(machine.hookAllowedResponse() == .none)
    }

    @Test func theHookAllowingAResponseStillArrivingReadsAgainUnlessSuspended() {
        var running = awaitingHead()
        _ = running.headReceived()
        _ = running.hookHeldResponse()
        #expect(running.hookAllowedResponse() == .resumeReading)
        #expect(running.end == .none)

        var suspended = awaitingHead()
        _ = suspended.headReceived()
        _ = suspended.hookHeldResponse()
        _ = suspended.suspend()
        #expect(suspended.hookAllowedResponse() == .none)
        #expect(suspended.resume() == .resumeReading)

        var cancelled = awaitingHead()
        _ = cancelled.headReceived()
        _ = cancelled.hookHeldResponse()
        #expect(cancelled.cancel() == .fail(.cancelled))
        #expect(cancelled.hookAllowedResponse() == .none)
    }

    @Test func aReplayOnAFreshConnectionStartsFromACleanResponse() {
        var machine = awaitingHead()
        _ = machine.suspend()
        _ = machine.resume()
        #expect(machine.exchangeFailed(.connectionClosed, onReusedConnection: true, responseStarted: false)
                == .enqueue(requireFreshConnection: true))
        #expect(machine.destination == .task && machine.reading == .flowing && machine.end == .none)
        _ = machine.connectionAssigned(); _ = machine.requestWritten()
        #expect(machine.headReceived() == .none)
        #expect(machine.responseEnded() == .succeed)
    }
}
