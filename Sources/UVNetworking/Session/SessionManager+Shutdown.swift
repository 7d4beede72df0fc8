import Synchronization

extension SessionManager {
    /// A session for the whole process, on `EventLoop.shared` and `WorkerPool.shared` with the
    /// default configuration, made on first use. For code that needs a client and owns no
    /// lifecycle to put one in: a library, a script, a handler of a server that should not make
    /// a manager per request.
    ///
    /// Nobody owns it, so nobody can end it for the others: `shutdown()`,
    /// `shutdown(deadline:)` and `invalidateSessionCancelingTasks` do nothing on it (the async
    /// ones return at once), its tasks are never cancelled by someone else's shutdown, and its
    /// connections live until their idle timeout or the process's end. `isShared` tells it
    /// apart. (async-http-client's `HTTPClient.shared` likewise refuses to shut down.)
    ///
    /// Its settings (`completionQueue`, `responseSerializer`, the hooks, the security policy)
    /// are shared too: set what a task needs on the task's own request or handler rather than on
    /// the manager, or make a manager of your own. It stops working only when
    /// `EventLoop.shared` or `WorkerPool.shared` is shut down (its tasks then complete with
    /// `.loopShutDown`), so a program that uses it does not shut those down.
    ///
    /// A service that wants to drain its requests at exit makes its own manager (by default on
    /// the same shared loop and workers, so it costs no thread) and shuts that one down.
    ///
    /// There is no `HTTPSessionManager.shared`: an `HTTPSessionManager` carries per-client state
    /// (its base URL, request serializer, security policy) that one user would change under the
    /// others. Make one per client: `HTTPSessionManager(baseURL:)` uses the shared loop and
    /// workers.
    public static let shared: SessionManager = {
        let manager = SessionManager()
        manager.sharedMark.store(true, ordering: .releasing)
        return manager
    }()

    /// Whether this is `SessionManager.shared`, whose shutdown and invalidation are refused.
    public var isShared: Bool { sharedMark.load(ordering: .acquiring) }

    /// Shuts the session down within a deadline: it stops taking tasks at once (a task resumed
    /// from now on completes with `.sessionInvalidated`), closes its idle connections, lets
    /// running tasks (uploads and downloads among them) finish until `deadline`, then cancels
    /// those still running (each completes once, with `.cancelled`), closes every remaining
    /// connection, and returns. Tasks created and not yet resumed are left alone; resumed later,
    /// they fail with `.sessionInvalidated`.
    ///
    /// Safe to call several times and from several tasks at once: each call returns once the
    /// session has drained; the earliest deadline of all the calls holds (a later one never
    /// extends it). `invalidateSessionCancelingTasks(true, ...)` during the wait cancels at once.
    /// Cancelling the calling Swift task brings the deadline to now: the remaining tasks are
    /// cancelled and the call returns as soon as they have ended. Nothing waits on a loop
    /// thread: the deadline is a timer on each loop.
    ///
    /// As with `shutdown()`, the ended tasks' completion handlers are in `completionGroup` when
    /// this returns (queued or running), not necessarily run; `sessionDidBecomeInvalid` runs
    /// once. On `SessionManager.shared` it returns at once and changes nothing.
    ///
    /// - Parameter deadline: when running tasks are cancelled; one already past cancels at once.
    public func shutdown(deadline: ContinuousClock.Instant) async {
        await shutdown(.at(deadline))
    }

    /// `shutdown(deadline:)` with the deadline `gracePeriod` from now.
    public func shutdown(gracePeriod: Duration) async {
        await shutdown(.at(.now.advanced(by: gracePeriod)))
    }

    private func shutdown(_ deadline: ShutdownDeadline) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                invalidate(deadline: deadline, resetSession: false) { continuation.resume() }
            }
        } onCancel: {
            // The waiting call above is told when the cancelled tasks have ended.
            invalidate(deadline: .now, resetSession: false) {}
        }
    }
}

/// When an invalidation cancels the tasks still running.
enum ShutdownDeadline: Sendable, Equatable {
    /// Never: they run to their end.
    case never
    /// At once.
    case now
    /// At this instant.
    case at(ContinuousClock.Instant)

    /// The deadline on a loop's clock whose time is `now` (milliseconds): `.max` for never, 0 for
    /// at once or past. Read on the loop, so the instant is measured against the loop's time of
    /// this iteration.
    func loopMilliseconds(now: UInt64, clock: ContinuousClock.Instant = .now) -> UInt64 {
        switch self {
        case .never: return .max
        case .now: return 0
        case .at(let instant):
            let left = clock.duration(to: instant)
            guard left > .zero else { return 0 }
            let (seconds, attoseconds) = left.components
            // Beyond that (about 285,000 years), never; as LoopDuration.
            guard seconds < 9_000_000_000_000 else { return .max }
            // Rounded up: cancelling a part of a millisecond late, never early.
            let fraction = (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
            return LoopDuration.deadline(now, plus: UInt64(seconds) * 1000 + UInt64(fraction))
        }
    }
}
