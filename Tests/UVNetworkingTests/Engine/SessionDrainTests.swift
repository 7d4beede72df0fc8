import Testing
@testable import UVNetworking

/// The engine's way out of a session, without sockets: deadlines, cancellation, repeated calls.
@Suite(.tags(.unit)) struct SessionDrainTests {
    @Test func invalidationWithNoTaskFinishesAtOnceAndClosesIdleConnections() {
        var drain = SessionDrain()
        let action = drain.invalidate(deadline: .max, now: 10, running: 0)
        #expect(action == SessionDrain.Action(closeIdleConnections: true, finish: true))
        #expect(drain.phase == .drained)
    }

    @Test func runningTasksMayFinishBeforeTheDeadline() {
        var drain = SessionDrain()
        #expect(drain.invalidate(deadline: 500, now: 10, running: 2)
            == SessionDrain.Action(closeIdleConnections: true, armDeadline: 500))
        #expect(drain.taskEnded(running: 1) == SessionDrain.Action())
        #expect(drain.taskEnded(running: 0) == SessionDrain.Action(finish: true))
        #expect(drain.phase == .drained)
        // The timer that still fires finds nothing to do.
        #expect(drain.deadlineTimerFired(now: 500, running: 0) == SessionDrain.Action())
    }

    @Test func tasksStillRunningAtTheDeadlineAreCancelled() {
        var drain = SessionDrain()
        _ = drain.invalidate(deadline: 500, now: 10, running: 1)
        // A timer that fires early (the loop's clock) cancels nothing.
        #expect(drain.deadlineTimerFired(now: 499, running: 1) == SessionDrain.Action())
        #expect(drain.deadlineTimerFired(now: 500, running: 1) == SessionDrain.Action(cancelRunningTasks: true))
        #expect(drain.taskEnded(running: 0) == SessionDrain.Action(finish: true))
    }

    @Test func aDeadlineAlreadyPastCancelsAtOnce() {
        var drain = SessionDrain()
        #expect(drain.invalidate(deadline: 0, now: 10, running: 3)
            == SessionDrain.Action(closeIdleConnections: true, cancelRunningTasks: true))
    }

    @Test func aSecondCallKeepsTheEarliestDeadline() {
        var drain = SessionDrain()
        _ = drain.invalidate(deadline: 500, now: 10, running: 1)
        // Later: nothing changes, the idle connections are closed already.
        #expect(drain.invalidate(deadline: 900, now: 20, running: 1) == SessionDrain.Action())
        #expect(drain.invalidate(deadline: .max, now: 20, running: 1) == SessionDrain.Action())
        #expect(drain.deadline == 500)
        // Earlier: the timer moves.
        #expect(drain.invalidate(deadline: 300, now: 20, running: 1) == SessionDrain.Action(armDeadline: 300))
        // Now: cancelled at once.
        #expect(drain.invalidate(deadline: 0, now: 20, running: 1) == SessionDrain.Action(cancelRunningTasks: true))
    }

    @Test func aCallAfterTheDrainEndedIsToldAtOnce() {
        var drain = SessionDrain()
        _ = drain.invalidate(deadline: .max, now: 0, running: 1)
        _ = drain.taskEnded(running: 0)
        #expect(drain.invalidate(deadline: 0, now: 5, running: 0) == SessionDrain.Action(finish: true))
        // A task refused after the drain (made and failed on the engine) finishes nothing again.
        #expect(drain.taskEnded(running: 0) == SessionDrain.Action())
    }

    @Test func tasksEndingWhileOpenFinishNothing() {
        var drain = SessionDrain()
        #expect(drain.taskEnded(running: 0) == SessionDrain.Action())
        #expect(!drain.isInvalidated)
    }

    @Test func aLoopShutdownStopsWaitingForTheDeadline() {
        var drain = SessionDrain()
        _ = drain.invalidate(deadline: 10_000, now: 0, running: 2)
        // The loop's own path ends the tasks, some maybe off the loop: the drain ends now.
        #expect(drain.loopShuttingDown() == SessionDrain.Action(finish: true))
        #expect(drain.deadline == 0)
        #expect(drain.taskEnded(running: 0) == SessionDrain.Action())
        #expect(drain.deadlineTimerFired(now: 20_000, running: 0) == SessionDrain.Action())
    }

    @Test func aLoopShutdownOfAnOpenSessionHasNobodyToTell() {
        var drain = SessionDrain()
        #expect(drain.loopShuttingDown() == SessionDrain.Action())
        #expect(drain.isInvalidated)
        #expect(drain.taskEnded(running: 0) == SessionDrain.Action())
    }

    @Test func deadlinesOnTheLoopClock() {
        let start = ContinuousClock.Instant.now
        #expect(ShutdownDeadline.never.loopMilliseconds(now: 100, clock: start) == .max)
        #expect(ShutdownDeadline.now.loopMilliseconds(now: 100, clock: start) == 0)
        #expect(ShutdownDeadline.at(start - .seconds(1)).loopMilliseconds(now: 100, clock: start) == 0)
        #expect(ShutdownDeadline.at(start + .milliseconds(250)).loopMilliseconds(now: 100, clock: start) == 350)
        // A part of a millisecond counts as a whole one: never early.
        #expect(ShutdownDeadline.at(start + .microseconds(1500)).loopMilliseconds(now: 100, clock: start) == 102)
        #expect(ShutdownDeadline.at(start + .seconds(Int64(1) << 50)).loopMilliseconds(now: 100, clock: start) == .max)
    }
}
