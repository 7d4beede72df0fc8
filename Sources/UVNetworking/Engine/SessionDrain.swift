/// How a session engine winds down (sans-I/O): invalidation stops it taking tasks, running tasks
/// may finish until a deadline, those still running then are cancelled, and once none is left
/// everything closes and whoever asked is told. `SessionEngine` feeds it events and performs the
/// actions it returns; loop-confined, as the engine.
///
/// Invalidation may be asked for any number of times, from several callers (`shutdown(deadline:)`
/// twice, `invalidateSessionCancelingTasks` during a shutdown): the earliest deadline wins, a
/// later one never extends it, and each caller is told once, when the engine has drained (or at
/// once when it already has).
struct SessionDrain: Equatable {
    enum Phase: Equatable {
        /// Taking tasks.
        case open
        /// Invalidated; tasks still run.
        case draining
        /// Invalidated and no task left: every connection was closed.
        case drained
    }

    /// What the engine does after an event; several may be asked at once, in this order.
    struct Action: Equatable {
        /// Close the idle connections now and park none from here on (the first invalidation).
        var closeIdleConnections = false
        /// Cancel every running task now (the deadline has come).
        var cancelRunningTasks = false
        /// Arm the deadline timer for this loop time (milliseconds).
        var armDeadline: UInt64?
        /// No task is left: close every connection and tell every waiter.
        var finish = false
    }

    private(set) var phase = Phase.open
    /// When running tasks are cancelled, in loop milliseconds; `.max`: never (they may run to
    /// their end).
    private(set) var deadline = UInt64.max

    /// Whether invalidation was asked for (tasks that come are refused).
    var isInvalidated: Bool { phase != .open }

    /// Invalidation asked for, with running tasks cancelled at `deadline` (0: at once; `.max`:
    /// never). `now` is the loop's time, `running` the engine's running tasks.
    mutating func invalidate(deadline: UInt64, now: UInt64, running: Int) -> Action {
        var action = Action()
        switch phase {
        case .drained:
            // Nothing left to wait for: the new caller is told at once.
            action.finish = true
            return action
        case .open:
            phase = .draining
            action.closeIdleConnections = true
        case .draining:
            break
        }
        guard running > 0 else {
            phase = .drained
            action.finish = true
            return action
        }
        guard deadline < self.deadline else { return action }
        self.deadline = deadline
        if deadline <= now {
            action.cancelRunningTasks = true
        } else {
            action.armDeadline = deadline
        }
        return action
    }

    /// A running task ended; `running` tasks are left.
    mutating func taskEnded(running: Int) -> Action {
        guard phase == .draining, running == 0 else { return Action() }
        phase = .drained
        return Action(finish: true)
    }

    /// The deadline timer fired at loop time `now` with `running` tasks left.
    mutating func deadlineTimerFired(now: UInt64, running: Int) -> Action {
        guard phase == .draining, deadline <= now else { return Action() }
        guard running > 0 else {
            phase = .drained
            return Action(finish: true)
        }
        return Action(cancelRunningTasks: true)
    }

    /// The loop is shutting down: its own path ends the tasks and closes everything, and the
    /// drain is over at once. Waiters are told now rather than by the last task's end: a task
    /// may end off the loop (a download whose file closes on a worker finds the loop gone), and
    /// would never report here.
    mutating func loopShuttingDown() -> Action {
        let waiting = phase == .draining
        phase = .drained
        deadline = 0
        return Action(finish: waiting)
    }
}
