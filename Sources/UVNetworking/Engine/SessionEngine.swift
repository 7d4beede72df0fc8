import Foundation
import HTTPTypes
import UVHTTP1

/// The loop-side half of a session: its pools (one per origin), its running tasks and the
/// hand-off of finished tasks to the worker pool and the completion queue. Loop-confined; the
/// manager reaches it only through `EventLoop.execute`.
///
/// Stored properties opt out of runtime exclusivity checks: only the loop thread touches them,
/// and the state machines rule out re-entrant mutation. The checks cost more per request than
/// the work they guard.
final class SessionEngine {
    let loop: EventLoop
    private let workers: WorkerPool
    private let configuration: SessionConfiguration
    /// What each runner needs of the configuration, made once.
    private let taskSettings: TaskSettings
    /// `SessionConfiguration.retrier`, apart from `taskSettings`: an existential there would
    /// make the settings a type every runner copies through value witnesses (TaskRunner+Retries).
    let retrier: (any RequestRetrier)?
    /// Unowned: the manager owns the engine. Its tasks keep it alive (a task holds its manager),
    /// so it is there whenever the engine has tasks; once it is gone, `managerReleased` closes
    /// everything without it.
    private unowned let manager: SessionManager
    /// The manager's hooks, held here so that trust evaluations never reach for the manager.
    private let hooks: SessionHooks
    private let resolver: DNSResolver
    /// Where the session logs and measures; nil when it does neither (Observability/).
    let observer: SessionObserver?
    @exclusivity(unchecked) private var pools: [PreparedRequest.Origin: ConnectionPool] = [:]
    /// What the pools share: the connection budget across origins, and dropping pools left
    /// empty for the idle connection timeout (which forgets them here too).
    private let poolSet: PoolSet
    @exclusivity(unchecked) private var lastPool: (origin: PreparedRequest.Origin, pool: ConnectionPool)?
    /// The last request looked up and its pool: a repeated request comes as the very same
    /// `PreparedRequest` (the session's cache), found by identity without copying and
    /// comparing its origin. Only a small one is kept, as the cache keeps only those: the
    /// engine never holds a large body after its task.
    @exclusivity(unchecked) private var lastPrepared: PreparedRequest?
    /// `lastPrepared`'s pool; a field of its own (not a tuple with it), so that a hit loads one
    /// reference instead of copying the pair out.
    @exclusivity(unchecked) private var lastPreparedPool: ConnectionPool?
    /// Tasks started on this engine and not finished. Each task holds its own runner
    /// (`loopRunner`): no table to hash into on every task operation.
    @exclusivity(unchecked) private var runningCount = 0
    @exclusivity(unchecked) private var finished: [FinishedTask] = []
    /// The last batch's size: the next batch's array is made that large at once, not grown.
    @exclusivity(unchecked) private var lastBatchCount = 0
    @exclusivity(unchecked) private var flushScheduled = false
    /// Whether a flush waits one iteration for more finished tasks (`FlushDeferral`, below).
    @exclusivity(unchecked) private var deferral = FlushDeferral()
    /// Where batches for the completion queue go (`completionMailbox(for:)`).
    @exclusivity(unchecked) private var mailbox: (queue: DispatchQueue, box: DrainMailbox<CompletionDelivery.Batch>)?
    @exclusivity(unchecked) private(set) var isInvalidated = false
    /// Invalidation's way to the end: deadline, cancellation, closing (SessionDrain.swift).
    @exclusivity(unchecked) private var drain = SessionDrain()
    /// Who waits for the drain to end (each shutdown or invalidation call), told once.
    @exclusivity(unchecked) private var invalidationWaiters: [() -> Void] = []
    /// Fires at the drain's deadline; made when a deadline is first set.
    @exclusivity(unchecked) private var drainTimer: LoopTimer?
    /// The loop is shutting down (or the worker pool was): tasks fail with `.loopShutDown`.
    @exclusivity(unchecked) private var loopShutDown = false
    /// Whether the loop will tell this engine when it shuts down (set at the first task).
    @exclusivity(unchecked) private var observesLoop = false

    /// This engine's place among its session's engines (one per loop): session-wide limits are
    /// split by it (`share.of(total)`).
    let share: EngineShare
    /// Milliseconds between request starts per origin (`delayPerHost`, `requestsPerSecondPerHost`);
    /// nil when requests are not paced.
    private let pacingInterval: UInt64?

    init(loop: EventLoop, workers: WorkerPool, configuration: SessionConfiguration, manager: SessionManager,
         share: EngineShare = .whole) {
        self.pacingInterval = OriginPacer.interval(delay: configuration.delayPerHost,
                                                   requestsPerSecond: configuration.requestsPerSecondPerHost)
        self.loop = loop
        self.share = share
        self.workers = workers
        self.configuration = configuration
        self.taskSettings = TaskSettings(configuration: configuration)
        self.retrier = configuration.retrier
        self.manager = manager
        self.hooks = manager.hooks
        self.resolver = DNSResolver(loop: loop, workers: workers, settings: DNSResolver.Settings(configuration))
        self.observer = SessionObserver(configuration: configuration)
        // With several loops, each engine holds its share of the budget (at least one connection).
        self.poolSet = PoolSet(loop: loop, maximumConnections: max(1, share.of(configuration.maximumConnections)),
                               dropDelay: configuration.idleConnectionTimeout)
    }

    // MARK: Task events from the caller

    func resume(_ task: SessionTask) { runner(for: task)?.resume() }
    func suspend(_ task: SessionTask) { task.loopRunner?.suspend() }
    func cancel(_ task: SessionTask) { runner(for: task)?.cancel() }

    /// The task's runner; made on first use, never again once the task has finished.
    private func runner(for task: SessionTask) -> TaskRunner? {
        loop.assertInLoop()
        if let runner = task.loopRunner { return runner }
        guard task.loopPhase == .notStarted else { return nil }
        task.loopPhase = .running
        let runner = TaskRunner(task: task, engine: self, settings: taskSettings)
        task.loopRunner = runner
        // Async callers get metrics in their DataResponse, so their tasks are measured too.
        // The engine's own reference to the manager's hooks: no hop through the task's manager.
        if hooks.isActive || task.outcomeReceiver != nil { runner.hookState = TaskHookState(madeAtStart: true) }
        runningCount += 1
        if !observesLoop {
            observesLoop = true
            // Strong, not weak: a weak reference would give the engine a side table, and every
            // retain and release of it (several per request) would take the slow path. The loop
            // drops the closure when it shuts down, and the engine removes it when its manager
            // is released or its invalidation is done, so the cycle does not outlive either.
            loop.addShutdownObserver(self) { [self] in self.loopShuttingDown() }
        }
        if loopShutDown || workers.isShutDown {
            runner.invalidate(.loopShutDown)
            return nil
        }
        if isInvalidated {
            runner.invalidate(.sessionInvalidated)
            return nil
        }
        return runner
    }

    // MARK: Pools

    /// The pool for the request's origin, made on first use.
    func pool(for prepared: PreparedRequest) -> ConnectionPool {
        // A traced task's preparation is made from a kept one by adding fields (`base`): its
        // origin is that one's.
        let request = prepared.base ?? prepared
        if lastPrepared === request, let pool = lastPreparedPool { return pool }
        let origin = request.origin
        // A batch usually targets one origin: comparing with the last one is cheaper than hashing.
        if let last = lastPool, last.origin == origin {
            remember(request, in: last.pool)
            return last.pool
        }
        if let pool = pools[origin] {
            lastPool = (origin, pool)
            remember(request, in: pool)
            return pool
        }
        let settings = ConnectionPool.Settings(
            maximumConnections: max(1, configuration.maximumConnectionsPerHost),
            idleTimeout: configuration.idleConnectionTimeout,
            connectTimeout: configuration.connectTimeout,
            decoderLimits: ResponseParser.Options.client(maxHeaderBytes: configuration.maximumResponseHeaderBytes,
                                                  maxBodyBytes: configuration.maximumResponseBodyBytes),
            http2: HTTP2Session.Settings(maximumHeaderListBytes: configuration.maximumResponseHeaderBytes),
            // h2c by prior knowledge: plain http, no proxy in between.
            speaksHTTP2First: configuration.httpVersion == .http2PriorKnowledge && origin.scheme == "http" && origin.proxy == nil,
            serviceType: origin.serviceType,
            pipelineDepth: configuration.pipelineDepth,
            cellular: origin.allowsCellularAccess ? nil : CellularScreen(workers: workers))
        // Through a proxy, connections go to the proxy; https tunnels to the origin from there.
        let pool = ConnectionPool(host: origin.proxy?.host ?? origin.host, port: origin.proxy?.port ?? origin.port,
                                  loop: loop, resolver: resolver, settings: settings, set: poolSet)
        if let proxy = origin.proxy, origin.scheme == "https" {
            let host = origin.host.contains(":") ? "[\(origin.host)]" : origin.host
            pool.tunnel = TunnelRoute(authority: "\(host):\(origin.port)", authorization: proxy.authorization)
        }
        if let security = request.security {
            pool.tls = TLSRoute(context: security.context, host: origin.host, sessions: TLSSessionCache(connectionLimit: settings.maximumConnections)) {
                [unowned self, unowned pool] trust, verdict in
                // The pool's waiters are this engine's runners: the pool names no task.
                let task = (pool.oldestWaitingRequest as? TaskRunner)?.task
                self.evaluateTrust(trust, policy: security.policy, port: origin.port, task: task, verdict: verdict)
            }
        }
        pool.origin = origin
        if let observer { pool.observation = PoolObservation(observer: observer, host: pool.host, port: pool.port) }
        if let interval = pacingInterval { pool.pacing = PoolPacing(pool: pool, loop: loop, interval: interval) }
        pools[origin] = pool
        lastPool = (origin, pool)
        remember(request, in: pool)
        if poolSet.onDrop == nil { poolSet.onDrop = { [unowned self] pool in self.poolDropped(pool) } }
        return pool
    }

    /// The set dropped `pool`, empty for the idle timeout: forgotten here too, with its TLS
    /// session cache (a later request to its origin makes a new pool, with a full handshake).
    private func poolDropped(_ pool: ConnectionPool) {
        if lastPool?.pool === pool { lastPool = nil }
        if lastPreparedPool === pool {
            lastPrepared = nil
            lastPreparedPool = nil
        }
        // Found by its origin key; a pool taken up again after a drop is no longer in the map.
        guard let origin = pool.origin as? PreparedRequest.Origin, pools[origin] === pool else { return }
        pools.removeValue(forKey: origin)
    }

    /// Keeps `request` as the last one looked up, if small (see `lastPrepared`).
    private func remember(_ request: PreparedRequest, in pool: ConnectionPool) {
        let small = PreparedRequestCache.isSmall(request)
        lastPrepared = small ? request : nil
        lastPreparedPool = small ? pool : nil
    }

    /// Evaluates a server's chain on the worker pool (the challenge handler, then the policy)
    /// and hands the verdict back to the loop.
    private func evaluateTrust(_ trust: ServerTrust, policy: SecurityPolicy, port: Int, task: SessionTask?,
                               verdict: @escaping (TrustVerdict) -> Void) {
        let loop = self.loop
        let hooks = self.hooks
        let callback = LoopBound(verdict, loop: loop)
        workers.run {
            let result = ServerTrustEvaluation.decide(trust, policy: policy, port: port, task: task,
                                                      handler: hooks.read { $0.authenticationChallengeHandler })
            _ = loop.execute { callback.value(result) }
        }
    }

    // MARK: Finishing

    /// A runner is done (success, failure or cancellation). Called exactly once per runner.
    func runnerFinished(_ runner: TaskRunner, error: NetworkingError?) {
        let task = runner.task
        precondition(task.loopPhase == .running, "task \(task.taskIdentifier) finished twice")
        task.loopPhase = .finished
        task.loopRunner = nil
        // Compared, not bound: binding would retain and release the (nil) reference per task.
        if runner.observation != nil { runner.observeFinished(error: error) }
        runningCount -= 1
        // The registry lets the task go with its batch (`flushFinished`), or, when it completed
        // off the loop, where it completed (`finishWithoutLoop`): no lock of its own here.
        // Meanwhile `tasks` leaves it out, being completed.
        // A success passes a literal nil: converting `error` would copy the optional through its
        // value witness, per task.
        let claimed = error == nil ? task.recordCompletion(error: nil) : task.recordCompletion(error: error)
        guard claimed else {
            // Completed already, off the loop: never delivered twice. (completeWithoutLoop waits
            // for the loop to stop, after which no runner finishes; this is the second lock.)
            if isInvalidated { perform(drain.taskEnded(running: runningCount)) }
            return
        }
        if finished.capacity == 0 { finished.reserveCapacity(lastBatchCount) }
        if error == nil && runner.hookState == nil && runner.download == nil {
            // A plain success: nothing to box.
            finished.append(FinishedTask(task: task, head: runner.head, body: runner.sink.takeBody()))
        } else {
            finished.append(FinishedTask(task: task, head: runner.head, body: error == nil ? runner.sink.takeBody() : Data(), error: error,
                                         hooks: runner.hookState?.ended(), download: runner.download?.finished))
        }
        if !flushScheduled {
            flushScheduled = true
            // One hand-off per loop iteration, however many tasks finished in it. Strong: an
            // engine replaced by a reset may have no other owner once its last task finished.
            loop.runAfterIO { self.flushFinished() }
        }
        if isInvalidated { perform(drain.taskEnded(running: runningCount)) }
    }

    /// Hands the tasks finished in this iteration on, the cheapest way they allow: to a worker
    /// when one of them needs real work (`CompletionDelivery.needsWorker`), else straight to the
    /// completion queue (one dispatch for the batch, responses built there), or, with
    /// `deliversOnEventLoop`, to their handlers right here.
    private func flushFinished() {
        // The last batch's mailbox is the completion queue's unless the queue was changed since
        // (then one batch waits an iteration for nothing).
        if deferral.shouldDefer(queueIdle: mailbox?.box.isIdle ?? false, othersRunning: runningCount > 0,
                                ending: isInvalidated || loopShutDown) {
            loop.runAfterIO { self.flushFinished() }
            return
        }
        flushScheduled = false
        var batch: [FinishedTask] = []
        swap(&batch, &finished)
        lastBatchCount = batch.count
        manager.tasksFinished(batch)
        let delivery = manager.deliverySnapshot(on: loop)
        // The batch is inside the completion group from here until its handlers are queued in
        // it (or have run), so the group is never seen empty in between (`SessionManager.shutdown`
        // relies on it).
        if CompletionDelivery.needsWorker(batch, serializer: delivery.serializer) {
            delivery.group.enter()
            // Consumed, not copied: the last reference (and the tasks' deallocation) goes with
            // the job, never stays with the loop.
            let handed = consume batch
            // On a worker; on Dispatch's global queue once the pool is shut down: completions are
            // delivered whatever else stopped.
            workers.run {
                CompletionDelivery.run(handed, with: delivery)
                delivery.group.leave()
            }
        } else if delivery.queue.isLoop {
            // At the end of the iteration, where nothing of the loop's is half-changed: handlers
            // may resume tasks inline (`SessionManager.send`).
            delivery.group.enter()
            CompletionDelivery.run(&batch, with: delivery, handlers: .here)
            delivery.group.leave()
            // Keep the storage for the next batch, unless a handler's task already finished.
            if finished.isEmpty {
                batch.removeAll(keepingCapacity: true)
                swap(&batch, &finished)
            }
        } else if case .dispatch(let queue) = delivery.queue {
            // Left by `CompletionDelivery.Batch.deliver`, once the handlers have run.
            delivery.group.enter()
            // Consumed: the queue may be done with the batch before this returns, and must then
            // hold its last reference (its tasks are freed there, not on the loop).
            let handed = consume batch
            completionMailbox(for: queue).post(CompletionDelivery.Batch(tasks: handed, target: delivery))
        }
    }

    /// The mailbox that hands batches to `queue`, made when the completion queue is first used
    /// or changed. A queue that is still draining an earlier mailbox runs that one's block first:
    /// batches stay in order on a serial queue.
    private func completionMailbox(for queue: DispatchQueue) -> DrainMailbox<CompletionDelivery.Batch> {
        if let mailbox, mailbox.queue === queue { return mailbox.box }
        let box = DrainMailbox<CompletionDelivery.Batch>(schedule: { queue.async(execute: $0) }) { batch in
            // Moved, not copied: a copy would share the tasks array, copied whole when resolved.
            var batch = consume batch
            batch.deliver()
        }
        mailbox = (queue, box)
        return box
    }

    /// Body or upload bytes moved: tell the task's progress handler, at most one call in flight.
    /// Inlined up to the test that most tasks stop at (no progress handler, no upload hook):
    /// called for every write and read, the call itself would cost more than the test.
    @inline(__always)
    func progressChanged(_ task: SessionTask, upload: Bool) {
        guard task.extras != nil || (upload && task.manager.hooks.contains(.sendBodyData)) else { return }
        reportProgress(task, upload: upload)
    }

    private func reportProgress(_ task: SessionTask, upload: Bool) {
        if upload && task.manager.hooks.contains(.sendBodyData) { hookBodyDataSent(task) }
        guard let handler = upload ? task.uploadProgressHandler : task.downloadProgressHandler else { return }
        guard !task.progressDeliveryPending.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let progress = upload ? task.uploadProgress : task.downloadProgress
        // With `deliversOnEventLoop`, at the end of this iteration, never inside the read.
        manager.deliveryQueue(on: loop).queue.async {
            task.progressDeliveryPending.store(false, ordering: .releasing)
            handler(progress)
        }
    }

    // MARK: Invalidation

    /// Stops taking tasks; running tasks may finish until `deadline` (loop milliseconds: 0
    /// cancels them now, `.max` never does), then are cancelled. Idle connections close now,
    /// busy ones when their task ends. `done` runs on the loop once no task is left (at once when
    /// none is); asked again, the earliest deadline holds and every caller's `done` runs.
    /// Returns whether this call began the drain (the first invalidation of this engine).
    @discardableResult
    func invalidate(deadline: UInt64, done: @escaping () -> Void) -> Bool {
        let first = !drain.isInvalidated
        isInvalidated = true
        invalidationWaiters.append(done)
        perform(drain.invalidate(deadline: deadline, now: LoopTimer.now(loop), running: runningCount))
        return first
    }

    /// Performs what the drain decided.
    private func perform(_ action: SessionDrain.Action) {
        if action.closeIdleConnections { poolSet.closeIdleConnections() }
        if action.cancelRunningTasks {
            // The manager lists every unfinished task; those started here have a runner here.
            for task in tasksOfThisLoop() where task.loopEngine === self { task.loopRunner?.invalidate(.cancelled) }
        }
        if let deadline = action.armDeadline {
            if drainTimer == nil {
                drainTimer = LoopTimer(loop: loop) { [unowned self] in
                    // Held until the callback returns: finishing closes and drops the timer.
                    let firing = self.drainTimer
                    self.perform(self.drain.deadlineTimerFired(now: LoopTimer.now(self.loop), running: self.runningCount))
                    withExtendedLifetime(firing) {}
                }
            }
            drainTimer!.arm(at: deadline)
        }
        if action.finish { invalidationDone() }
    }

    /// No task is left on an invalidated engine: every connection closes, the waiters are told
    /// after I/O, so after the last tasks' hand-off (scheduled before) has entered the group.
    private func invalidationDone() {
        closeAllConnections()
        // Tasks that come now fail at once: nothing is left for a loop shutdown to end.
        if observesLoop { loop.removeShutdownObserver(self) }
        tellInvalidationWaiters()
    }

    /// Each waiter runs once, after I/O (a loop shutting down runs those before it stops).
    private func tellInvalidationWaiters() {
        let waiters = invalidationWaiters
        invalidationWaiters.removeAll()
        for waiter in waiters { loop.runAfterIO(waiter) }
    }

    /// The manager was released: no task of it is left (each task holds its manager), and none
    /// can come. Closes every connection, so nothing of the session outlives it on the loop.
    func managerReleased() {
        isInvalidated = true
        invalidationWaiters.removeAll()
        closeAllConnections()
        if observesLoop { loop.removeShutdownObserver(self) }
    }

    /// The loop is shutting down: every running task ends with `.loopShutDown`, every connection
    /// closes, and tasks that come later fail the same way.
    private func loopShuttingDown() {
        loopShutDown = true
        isInvalidated = true
        let action = drain.loopShuttingDown()
        if runningCount > 0 {
            // Tasks hold the manager, so it is alive while any runs.
            for task in tasksOfThisLoop() where task.loopEngine === self { task.loopRunner?.invalidate(.loopShutDown) }
        }
        closeAllConnections()
        // A drain in progress is over: every task has ended here or ends off the loop.
        if action.finish { tellInvalidationWaiters() }
    }

    /// The manager's unfinished tasks that run on this engine's loop: a task's loop-side fields
    /// (`loopRunner`) may be read only on its own loop, and a session over several loops lists
    /// the others' tasks too. (A task's loop never changes: see `SessionManager.loopIndex(for:)`.)
    private func tasksOfThisLoop() -> [SessionTask] {
        share.count == 1 ? manager.tasks : manager.tasks.filter { manager.loop(for: $0) === loop }
    }

    private func closeAllConnections() {
        drainTimer?.close()
        drainTimer = nil
        poolSet.closeAll()
        resolver.close()
        pools.removeAll()
        lastPool = nil
        lastPrepared = nil
        lastPreparedPool = nil
    }

    /// Open or opening connections across every pool (for tests and metrics).
    var connectionCount: Int { pools.values.reduce(0) { $0 + $1.connectionCount } }

    /// Bytes the HTTP/2 sessions keep for their next streams, across origins (for tests).
    var http2CachedBytes: Int { pools.values.reduce(0) { $0 + $1.http2CachedBytes } }

    /// Pools the engine holds (for tests: empty ones are dropped after the idle timeout).
    var poolCount: Int { poolSet.poolCount }

    /// The most connections open or opening at once so far, across origins (for tests).
    var peakConnectionCount: Int { poolSet.budget.peakUnits }
}

/// Which of a session's engines this is, out of how many (one per loop of its group): the seam
/// for limits that hold for the session as a whole, such as a connection budget, which each
/// engine enforces on its own loop for its share (`of(_:)`), so that the shares add up to the
/// total without any engine asking another.
struct EngineShare: Sendable, Equatable {
    /// The engine's loop's position in the group.
    let index: Int
    /// The number of engines (loops) of the session.
    let count: Int

    /// The only engine of a single-loop session.
    static let whole = EngineShare(index: 0, count: 1)

    /// This engine's part of `total`: the total divided evenly, the first engines taking one
    /// more each until the remainder is spent, so the parts add up to `total` exactly. A part is
    /// never below one when `total` is at least the number of engines; below that, engines past
    /// the total get zero (callers that need one at least say so).
    func of(_ total: Int) -> Int {
        guard count > 1 else { return total }
        guard total > 0 else { return total }
        return total / count + (index < total % count ? 1 : 0)
    }
}

/// Whether the tasks finished in one loop iteration wait for the next iteration's before they go
/// to the completion queue (`SessionEngine.flushFinished`).
///
/// Posting to an idle serial queue wakes the thread that runs it: a futex call on each side and a
/// context switch. The queue drains a batch faster than the loop fills one, so it is idle at
/// almost every post, and each post then costs a wake-up. Putting the batch off by one iteration
/// (whose poll does not block: `EventLoop.runAfterIO`) lets the next iteration's finished tasks
/// join it, for one wake-up instead of two. Only once in a row, only when a post would wake the
/// queue, only while other tasks run (so more may finish), and never while the session or the
/// loop is ending (what runs after the flush then counts on its tasks being in the group).
struct FlushDeferral {
    /// The pending flush was put off already: it goes now.
    private(set) var deferred = false

    /// Called at each flush: true when this one should wait for the next iteration.
    mutating func shouldDefer(queueIdle: Bool, othersRunning: Bool, ending: Bool) -> Bool {
        if deferred {
            deferred = false
            return false
        }
        guard queueIdle, othersRunning, !ending else { return false }
        deferred = true
        return true
    }
}
