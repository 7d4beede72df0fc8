import Dispatch
import Foundation
import Synchronization
import UVHTTP1

/// Creates and runs tasks, like AFURLSessionManager: every task's connection lives on one event
/// loop; responses are serialized on a worker pool; completion handlers run on `completionQueue`
/// inside `completionGroup`.
///
/// Loops: a session made with a loop (the default: `EventLoop.shared`) runs everything on that
/// loop. One made over an `EventLoopGroup` of several loops spreads its origins over them: a
/// task is given its loop when first resumed, by its origin (scheme, host and port: a stable
/// hash, modulo the number of loops), so every task of an origin runs on one loop and its pool
/// of connections lives there. A task that follows a redirect to another origin stays on the
/// loop it started on: that origin may then have a pool on two loops. Each loop has its own
/// pools, DNS cache and TLS session cache, so a limit per host (`maximumConnectionsPerHost`)
/// holds per loop for such a redirected origin.
///
/// Lifecycle: a manager can be dropped at any moment. Each task holds its manager until it has
/// completed, so tasks already resumed run to completion, as URLSession and AFNetworking keep a
/// session alive while its tasks run (a task created and never resumed keeps its manager alive
/// too: cancel it, or invalidate the session). When the last reference goes, the manager's
/// connections are closed on the loop. `shutdown()` (async) invalidates the session and waits
/// for its tasks and connections; `invalidateSessionCancelingTasks` does the same without
/// waiting. If the manager's loop or worker pool has been shut down, tasks resumed afterwards
/// complete with `NetworkingError.Code.loopShutDown`.
public class SessionManager: @unchecked Sendable {
    // @unchecked: mutable state is in `settings` (a mutex) and `registry` (TaskRegistry.swift);
    // each engine is touched only on its loop's thread.

    /// The configuration the session was made with.
    public let configuration: SessionConfiguration
    /// The loops that run this session's connections: one for a session made with a loop.
    public let group: EventLoopGroup
    /// The first loop of `group`. For a session made with a loop, the loop that runs all its
    /// connections. Over a group of several, only the loop of the origins that map to the first;
    /// each task runs on the loop of its origin. `sessionDidBecomeInvalid` runs on this loop
    /// with `deliversOnEventLoop`.
    public let loop: EventLoop
    /// `group.loops`, read without going through the group.
    private let loops: [EventLoop]
    /// `loops.count`: with one loop, every task goes to `loop` and `engine` without a hash.
    private let loopCount: Int
    /// The threads that run this session's serializers.
    public let workers: WorkerPool
    /// `configuration.defaultRequestFields`, checked and encoded once: each request copies
    /// their bytes.
    let defaultRequestFields: EncodedFields
    /// `configuration.defaultRangeRequestFields`, encoded once: for requests that carry Range.
    let defaultRangeRequestFields: EncodedFields

    /// The session's fields for `request`: without the Accept-Encoding of ours when it asks
    /// for a range (SessionConfiguration.defaultRangeRequestFields says why).
    func defaultFields(for request: Request) -> EncodedFields {
        // Most sessions decode responses and most requests set few fields: one short walk.
        guard configuration.decompressesResponses,
              request.headerFields.contains(where: { RequestEncoder.sameName($0.name, "Range") }) else { return defaultRequestFields }
        return defaultRangeRequestFields
    }
    /// The last request prepared, reused by an equal one (`PreparedRequestCache`).
    let preparedRequests = PreparedRequestCache()
    /// `configuration.cookieStore` and `.proxy`, read per task without copying the configuration.
    let cookieStore: CookieStore?
    let proxies: ProxyConfiguration
    /// `configuration.cache`, read per task without copying the configuration.
    let cache: HTTPCache?
    /// The tracer the session's tasks report spans to; nil when there is none (a `NoOpTracer`),
    /// so that each task pays one nil check (SessionManager+Tracing.swift).
    let tracing: SessionTracing?

    private struct Settings {
        var completionQueue: DispatchQueue?
        var completionGroup: DispatchGroup?
        var responseSerializer: any ResponseSerializer = JSONResponseSerializer() {
            didSet { plainValidation = responseSerializer as? HTTPResponseSerializer }
        }
        /// `responseSerializer` when it is an `HTTPResponseSerializer`, cast once here rather than
        /// per batch (`DeliveryTarget.plainValidation`).
        var plainValidation: HTTPResponseSerializer?
        var sessionDidBecomeInvalid: (@Sendable () -> Void)?
        var deliversOnEventLoop = false
        var reachabilityManager: NetworkReachabilityManager?
    }

    private let settings = Mutex(Settings())
    /// Orders in-place changes of `responseSerializer` (its `_modify`); recursive, so a change
    /// that reads or sets the serializer again on the same thread does not deadlock.
    private let responseSerializerEdits = NSRecursiveLock()
    private let registry = TaskRegistry()
    private let nextIdentifier = Atomic<Int>(1)
    /// The optional closures and notification switch (SessionHooks.swift).
    let hooks = SessionHooks()
    /// Security policies and the TLS context (SessionManager+Security.swift).
    let security = Mutex(SessionSecurity())
    /// The engine of the first loop (`loop`). Loop thread only (set in `init` before any job can
    /// run, replaced in a loop job), except in `deinit`, which hands it to the loop when no job
    /// can hold the manager any more.
    @exclusivity(unchecked) private(set) var engine: SessionEngine!
    /// The engines of the other loops, `loops[1...]`, in order; each slot is touched only on its
    /// loop's thread (as `engine`). Empty for a single-loop session.
    private let otherEngines: [EngineSlot]
    private static let sharedCompletionGroup = DispatchGroup()
    /// Set once, on `shared` only: its shutdown and invalidation are refused.
    let sharedMark = Atomic(false)
    /// Whether some invalidation call has claimed the current session's `sessionDidBecomeInvalid`
    /// (`invalidate`); a reset makes a new session, unclaimed.
    private let invalidationReported = Atomic(false)

    /// A replaceable engine of a loop other than the first (`otherEngines`).
    private final class EngineSlot {
        /// Set right after the manager's own init (the engine needs the manager).
        @exclusivity(unchecked) var engine: SessionEngine!
    }

    /// Creates a session on one loop (by default the shared one) and a worker pool (by default
    /// the shared one): a group of one loop.
    public init(configuration: SessionConfiguration = .default, loop: EventLoop = .shared, workers: WorkerPool = .shared) {
        self.configuration = configuration
        self.defaultRequestFields = EncodedFields(configuration.defaultRequestFields)
        self.defaultRangeRequestFields = EncodedFields(configuration.defaultRangeRequestFields)
        self.cookieStore = configuration.cookieStore
        self.proxies = configuration.proxy
        self.cache = configuration.cache
        self.tracing = SessionTracing(configuration)
        self.group = EventLoopGroup(loops: [loop])
        self.loop = loop
        self.loops = [loop]
        self.loopCount = 1
        self.workers = workers
        self.otherEngines = []
        self.engine = SessionEngine(loop: loop, workers: workers, configuration: configuration, manager: self)
    }

    /// Creates a session over the loops of `group` (see the class's notes on loops): each loop
    /// gets its share of the session's origins, pools and DNS cache. With a group of one loop it
    /// is the session `init(configuration:loop:workers:)` makes.
    public init(configuration: SessionConfiguration = .default, group: EventLoopGroup, workers: WorkerPool = .shared) {
        self.configuration = configuration
        self.defaultRequestFields = EncodedFields(configuration.defaultRequestFields)
        self.defaultRangeRequestFields = EncodedFields(configuration.defaultRangeRequestFields)
        self.cookieStore = configuration.cookieStore
        self.proxies = configuration.proxy
        self.cache = configuration.cache
        self.tracing = SessionTracing(configuration)
        self.group = group
        self.loop = group.loops[0]
        self.loops = group.loops
        self.loopCount = group.loops.count
        self.workers = workers
        let count = group.loops.count
        // The slots first: an engine takes `self`, usable once every stored property is set.
        self.otherEngines = (1..<max(1, count)).map { _ in EngineSlot() }
        for index in 0..<count {
            setEngine(SessionEngine(loop: group.loops[index], workers: workers, configuration: configuration, manager: self,
                                    share: EngineShare(index: index, count: count)), at: index)
        }
    }

    /// The engine of `loops[index]`. On that loop's thread only (or in `deinit`).
    private func engine(at index: Int) -> SessionEngine {
        index == 0 ? engine! : otherEngines[index - 1].engine
    }

    /// Replaces the engine of `loops[index]`. On that loop's thread only.
    private func setEngine(_ engine: SessionEngine, at index: Int) {
        if index == 0 { self.engine = engine } else { otherEngines[index - 1].engine = engine }
    }

    /// The position in `loops` of the loop that runs `task`: its origin's, for the task's whole
    /// life (the task's first request never changes, a redirect's does not count). A task that
    /// could not be prepared has no origin and goes to the first loop, where it fails.
    @inline(__always)
    func loopIndex(for task: SessionTask) -> Int {
        guard loopCount > 1, let prepared = task.preparedRequest else { return 0 }
        return Int(UInt(bitPattern: prepared.origin.placementHash) % UInt(loopCount))
    }

    /// The loop that runs `task` (see `loopIndex(for:)`).
    @inline(__always)
    func loop(for task: SessionTask) -> EventLoop {
        loopCount == 1 ? loop : loops[loopIndex(for: task)]
    }

    /// Replaces the default policy (AFNetworking's `securityPolicy` setter). Connections opened
    /// under the old policy are not reused for new requests.
    ///
    /// Throws `.invalidCertificate`, keeping the old policy, when the policy has a pinning mode
    /// but nothing pinned for it (no certificate in `.certificate` mode; no certificate and no
    /// key hash in `.publicKey` mode): such a policy would refuse every server, as AFNetworking's
    /// does when its bundle holds no certificate, and a directory that held none is the usual
    /// cause. `HTTPSessionManager` also throws when the policy pins and its base URL is not https.
    // In the class body, not the extension, so that HTTPSessionManager can refine it.
    public func setSecurityPolicy(_ policy: SecurityPolicy) throws(NetworkingError) {
        try Self.refuseMissingPins(policy)
        security.withLock {
            $0.defaultPolicy = policy
            $0.policiesChanged()
        }
    }

    /// The queue completion handlers (and progress handlers) run on; nil means the main queue.
    /// Not used while `deliversOnEventLoop` is on.
    public var completionQueue: DispatchQueue? {
        get { settings.withLock { $0.completionQueue } }
        set { settings.withLock { $0.completionQueue = newValue } }
    }

    /// The group completion handlers run in; nil means one private group shared by all managers.
    public var completionGroup: DispatchGroup? {
        get { settings.withLock { $0.completionGroup } }
        set { settings.withLock { $0.completionGroup = newValue } }
    }

    /// Turns responses into objects. Defaults to `JSONResponseSerializer`, as in AFNetworking.
    ///
    /// Its rules can be changed in place, as AFNetworking users write it:
    /// `manager.responseSerializer.acceptableContentTypes = ["text/html"]`, or
    /// `manager.responseSerializer.acceptableStatusCodes.insert(404)`. Such a change is one step
    /// against other threads' changes (read, changed, written back under a lock; none is lost)
    /// and applies to tasks that complete afterwards.
    public var responseSerializer: any ResponseSerializer {
        get { settings.withLock { $0.responseSerializer } }
        set { responseSerializerEdits.withLock { settings.withLock { $0.responseSerializer = newValue } } }
        _modify {
            // A copy changed outside the mutex (the change may run any code), under a lock that
            // orders it against other changes; readers still take only the mutex.
            responseSerializerEdits.lock()
            defer { responseSerializerEdits.unlock() }
            var serializer = settings.withLock { $0.responseSerializer }
            yield &serializer
            settings.withLock { $0.responseSerializer = serializer }
        }
    }

    /// Called once the session has been invalidated and every task has ended, on the completion
    /// queue (AFNetworking's setSessionDidBecomeInvalidBlock).
    public var sessionDidBecomeInvalid: (@Sendable () -> Void)? {
        get { settings.withLock { $0.sessionDidBecomeInvalid } }
        set { settings.withLock { $0.sessionDidBecomeInvalid = newValue } }
    }

    /// Runs completion handlers, progress handlers and the manager's hooks on the session's event
    /// loop thread, as NIO runs a future's callbacks, instead of on `completionQueue`; off by
    /// default. A task resumed (suspended, cancelled) from the loop thread then starts at once,
    /// without a hop through the loop's job queue, and a response that needs no worker thread
    /// (see `ResponseSerializer.needsWorkerThread`) never leaves the loop: the fastest way to run
    /// many requests, one after another, from completion handlers.
    ///
    /// The price: handlers hold up every connection of the loop while they run. They must not
    /// block (no waiting on semaphores, groups, locks held long, synchronous I/O, `sync` calls to
    /// queues that may wait for the loop) and must stay short; hand longer work to a queue of your
    /// own. Debug builds trap when a blocking call of this library (`WorkerPool.shutdown()`,
    /// another loop's `EventLoop.shutdown()`, `openConnectionCount`) is made on a loop thread;
    /// the loop's own synchronous `shutdown()` only starts the shutdown there, as from any job. Serializers that
    /// need a worker thread still run on the worker pool; their handlers then come back to the
    /// loop. `completionGroup` is entered and left as usual. The async API (`data(for:)`) is not
    /// affected.
    public var deliversOnEventLoop: Bool {
        get { settings.withLock { $0.deliversOnEventLoop } }
        set { settings.withLock { $0.deliversOnEventLoop = newValue } }
    }

    /// A reachability manager kept with the session, as AFURLSessionManager kept its
    /// reachabilityManager; nil by default. The session neither starts nor reads it: it is
    /// there for your code to observe (start it, set its handler). Advisory, as AFNetworking's
    /// was: no request waits or fails because of its status.
    public var reachabilityManager: NetworkReachabilityManager? {
        get { settings.withLock { $0.reachabilityManager } }
        set { settings.withLock { $0.reachabilityManager = newValue } }
    }

    /// Where and how finished tasks are delivered; `loop` is the loop handlers run on with
    /// `deliversOnEventLoop` (the tasks' loop).
    func deliverySnapshot(on loop: EventLoop) -> DeliveryTarget {
        let hooks = self.hooks.activeSnapshot()
        return settings.withLock {
            DeliveryTarget(queue: deliveryQueue(of: $0, loop: loop), group: $0.completionGroup ?? Self.sharedCompletionGroup,
                           serializer: $0.responseSerializer, plainValidation: $0.plainValidation, hooks: hooks)
        }
    }

    /// `deliverySnapshot(on:)` for what belongs to no task's loop (the first loop).
    func deliverySnapshot() -> DeliveryTarget { deliverySnapshot(on: loop) }

    /// Where handlers run, and the group they run in; `loop` as in `deliverySnapshot(on:)`.
    func deliveryQueue(on loop: EventLoop) -> (queue: DeliveryQueue, group: DispatchGroup) {
        settings.withLock { (deliveryQueue(of: $0, loop: loop), $0.completionGroup ?? Self.sharedCompletionGroup) }
    }

    /// `deliveryQueue(on:)` for what belongs to no task's loop (the first loop).
    func deliveryQueue() -> (queue: DeliveryQueue, group: DispatchGroup) { deliveryQueue(on: loop) }

    private func deliveryQueue(of settings: Settings, loop: EventLoop) -> DeliveryQueue {
        settings.deliversOnEventLoop ? .loop(loop) : .dispatch(settings.completionQueue ?? .main)
    }

    /// Creates a suspended data task; call `resume()` to start it. `completionHandler` runs exactly
    /// once: with the serialized object, or with the error (a failed response's body is in the
    /// error).
    ///
    /// The request is checked and encoded here, on the calling thread, with the cookies of this
    /// moment. Sending one `Request` value over and over is cheap: the session reuses the last
    /// request's encoding for an equal request while its cookies and security policy are
    /// unchanged.
    ///
    /// `completionHandler` has no default so that a trailing closure is the completion handler
    /// (Swift binds a trailing closure to the first closure parameter it can skip to only when a
    /// later one needs an argument); `dataTask(with:uploadProgress:downloadProgress:)` makes a
    /// task without one.
    public func dataTask(with request: Request,
                         uploadProgress: (@Sendable (Progress) -> Void)? = nil,
                         downloadProgress: (@Sendable (Progress) -> Void)? = nil,
                         completionHandler: SessionTask.CompletionHandler?) -> DataTask {
        registerTask { identifier in
            DataTask(identifier: identifier, request: request, manager: self, uploadProgress: uploadProgress,
                     downloadProgress: downloadProgress, completionHandler: completionHandler)
        }
    }

    /// Makes a task with the next identifier and lists it in `tasks`.
    func registerTask<Task: SessionTask>(_ make: (_ identifier: Int) -> Task) -> Task {
        let identifier = nextIdentifier.add(1, ordering: .relaxed).oldValue
        let task = make(identifier)
        registry.register(task)
        return task
    }

    /// Every task created and not yet completed, by identifier.
    public var tasks: [SessionTask] { registry.all }

    /// The data tasks among `tasks`.
    public var dataTasks: [DataTask] { tasks.compactMap { $0 as? DataTask } }

    /// What a caller can do to a task; carried to the loop as a value so a call costs one job.
    enum TaskOperation: Sendable { case resume, suspend, cancel }

    /// Tells the loop that `task`'s public state changed to what `operation` made it, for the
    /// engine that runs `task`: the current one, or the one it started on before a reset. On the
    /// loop thread itself (a handler with `deliversOnEventLoop`, or a job) it runs at once: the
    /// loop calls out only where its state is consistent, and running resume, suspend and cancel
    /// all inline keeps them in the order they were made.
    ///
    /// The job carries the task alone (a closure whose one capture is the task needs no context
    /// of its own: no allocation per request) and the loop acts on the task's state when the job
    /// runs, the latest the caller set: a resume overtaken by a cancel cancels, one overtaken by
    /// a suspend does not start the task.
    func send(_ operation: TaskOperation, for task: SessionTask) {
        // `loop` itself with one loop: a local copy of the reference would be retained per call.
        if loopCount == 1 {
            send(operation, for: task, on: loop)
        } else {
            send(operation, for: task, on: loops[loopIndex(for: task)])
        }
    }

    @inline(__always)
    private func send(_ operation: TaskOperation, for task: SessionTask, on loop: EventLoop) {
        let accepted: Bool
        if loop.inLoop {
            perform(operation, for: task)
            accepted = true
        } else {
            accepted = loop.execute { task.stateChangedOnLoop() }
        }
        guard accepted else {
            // The loop was shut down (or never started): a task it never ran ends here. One it
            // ran had already ended when it stopped.
            switch operation {
            case .resume: task.completeWithoutLoop(NetworkingError(.loopShutDown, loop.shutDownDetail))
            case .cancel: task.completeWithoutLoop(NetworkingError(.cancelled, "the task was cancelled"))
            case .suspend: break
            }
            return
        }
        if operation != .cancel && hooks.contains(.notifications) {
            postTaskNotification(operation == .resume ? .networkingTaskDidResume : .networkingTaskDidSuspend, for: task)
        }
    }

    /// Loop thread only.
    func perform(_ operation: TaskOperation, for task: SessionTask) {
        // A task that has not started yet (the usual resume) goes to the current engine; one
        // that runs, to the engine it started on (a reset may have replaced the manager's).
        guard let engine = task.loopEngine else {
            perform(operation, for: task, on: loopCount == 1 ? engine! : engine(at: loopIndex(for: task)))
            return
        }
        perform(operation, for: task, on: engine)
    }

    @inline(__always)
    private func perform(_ operation: TaskOperation, for task: SessionTask, on engine: SessionEngine) {
        switch operation {
        case .resume: engine.resume(task)
        case .suspend: engine.suspend(task)
        case .cancel: engine.cancel(task)
        }
    }

    /// `task` completed: `tasks` no longer lists it.
    func taskFinished(_ task: SessionTask) {
        registry.remove(task)
    }

    /// The tasks of a finished batch completed: one lock for the batch.
    func tasksFinished(_ batch: [SessionEngine.FinishedTask]) {
        // By index: each task is read in place, not copied out of the batch with its entry.
        registry.remove(batch.indices) { batch[$0].unretainedTask }
    }

    /// Stops the session, like AFNetworking's method of the same name: with `cancelPendingTasks`
    /// every task is cancelled, otherwise running tasks finish first. Connections close once no
    /// task needs them. With `resetSession`, the manager is usable again afterwards with a fresh
    /// session (new pools, new DNS cache); otherwise later tasks fail with `.sessionInvalidated`.
    ///
    /// On `SessionManager.shared` it does nothing (see `shared`).
    public func invalidateSessionCancelingTasks(_ cancelPendingTasks: Bool, resetSession: Bool) {
        invalidate(deadline: cancelPendingTasks ? .now : .never, resetSession: resetSession) {}
    }

    /// Invalidates the session as `invalidateSessionCancelingTasks(false, resetSession: false)`
    /// does, and returns once every running task has ended and every connection of the session
    /// is closed. Later tasks fail with `.sessionInvalidated`.
    ///
    /// The ended tasks' completion handlers are then in `completionGroup` (queued or running on
    /// the completion queue, never yet to be queued): wait on the group to know they have run.
    /// `shutdown()` does not wait for them itself, since a completion queue that never runs (the
    /// main queue of a program that never calls `dispatchMain`) would make it wait forever.
    ///
    /// Returns at once when the loop has been shut down, which ended the session's tasks and
    /// closed its connections already. In an async context `shutdown()` names this method;
    /// `invalidateSessionCancelingTasks` is the synchronous way. `shutdown(deadline:)` also
    /// bounds the wait (SessionManager+Shutdown.swift).
    ///
    /// On `SessionManager.shared` it returns at once and changes nothing (see `shared`).
    public func shutdown() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            invalidate(deadline: .never, resetSession: false) { continuation.resume() }
        }
    }

    /// `invalidateSessionCancelingTasks`, with running tasks cancelled at `deadline`, then
    /// `done` once the old session has no task or connection left on any of its loops (on the
    /// last loop to finish, or on the caller's thread when every loop is shut down). Refused on
    /// `shared`: `done` runs at once.
    func invalidate(deadline: ShutdownDeadline, resetSession: Bool, done: @escaping @Sendable () -> Void) {
        guard !isShared else { return done() }
        let remaining = Countdown(loopCount) { [self] started in
            // Told once per session, by the call that invalidated it.
            if started { self.sessionBecameInvalid() }
            done()
        }
        for index in 0..<loopCount {
            let loop = loops[index]
            let accepted = loop.execute { [self] in
                let old = self.engine(at: index)
                if resetSession {
                    self.setEngine(SessionEngine(loop: loop, workers: self.workers, configuration: self.configuration, manager: self,
                                                 share: old.share), at: index)
                }
                let first = old.invalidate(deadline: deadline.loopMilliseconds(now: LoopTimer.now(loop)), done: { remaining.arrive() })
                // The first loop's engine names the session: the call that began its drain
                // reports it. (Over several loops, two calls at once may each begin another
                // loop's drain.)
                guard index == 0 else { return }
                if first && !self.invalidationReported.exchange(true, ordering: .acquiringAndReleasing) { remaining.started() }
                if resetSession { self.invalidationReported.store(false, ordering: .releasing) }
            }
            // The loop's shutdown already ended every task and closed every connection there.
            // The first call to find the first loop gone reports, unless a call reported before.
            if !accepted {
                if index == 0 && !invalidationReported.exchange(true, ordering: .acquiringAndReleasing) { remaining.started() }
                remaining.arrive()
            }
        }
    }

    /// Runs its action when `arrive()` has been called `count` times, on the last caller's thread.
    /// Its action is told whether `started()` was called (this call reports the session invalid).
    private final class Countdown: Sendable {
        private let left: Atomic<Int>
        private let began = Atomic(false)
        private let action: @Sendable (_ started: Bool) -> Void
        init(_ count: Int, _ action: @escaping @Sendable (_ started: Bool) -> Void) {
            left = Atomic(count)
            self.action = action
        }
        func started() { began.store(true, ordering: .relaxed) }
        func arrive() {
            if left.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 { action(began.load(ordering: .relaxed)) }
        }
    }

    private func sessionBecameInvalid() {
        let target = deliverySnapshot()
        guard let hook = sessionDidBecomeInvalid else { return }
        target.queue.async(group: target.group) { hook() }
    }

    /// No task of this manager is left (each holds its manager), but its connections may be: they
    /// close on the loops, where the engines live.
    deinit {
        for index in 0..<loopCount {
            let engine = LoopBound(engine(at: index), loop: loops[index])
            // Refused only once the loop has shut down, which closed the engine's connections.
            _ = loops[index].execute { engine.value.managerReleased() }
        }
    }

    /// How many connections the session holds on all its loops: open ones, idle or busy, and
    /// those still connecting (TCP connect, TLS handshake). 0 once `shutdown()` has returned or
    /// every connection was closed for idleness: what a service checks to see its drain done.
    ///
    /// Threads: call it from any thread but the session's loop threads, where it traps (it would
    /// wait on itself). Cost: one job on each loop, and the calling thread blocks until every
    /// loop has run it (microseconds when the loops are idle, up to one loop iteration when they
    /// are busy). Meant for health checks, drains and diagnostics, not for each request; from
    /// async code it holds its thread for that wait.
    public var openConnectionCount: Int {
        openConnectionCounts.reduce(0, +)
    }

    /// Open or opening connections of the current session, per loop (in `group.loops`' order);
    /// asks each loop and waits.
    var openConnectionCounts: [Int] {
        precondition(!loops.contains { $0.inLoop }, "would deadlock on the loop thread")
        EventLoop.assertNotOnLoopThread("SessionManager.openConnectionCount")
        let result = Mutex([Int](repeating: 0, count: loopCount))
        let done = DispatchGroup()
        for index in 0..<loopCount {
            done.enter()
            let accepted = loops[index].execute { [self] in
                let count = self.engine(at: index).connectionCount
                result.withLock { $0[index] = count }
                done.leave()
            }
            // A loop that was shut down closed every connection.
            if !accepted { done.leave() }
        }
        done.wait()
        return result.withLock { $0 }
    }
    /// What `body` reads from each loop's engine, in `group.loops`' order (nil for a loop shut
    /// down); asks each loop and waits. For tests and diagnostics, as `openConnectionCounts`.
    func fromEachEngine<T: Sendable>(_ body: @escaping @Sendable (SessionEngine) -> T) -> [T?] {
        precondition(!loops.contains { $0.inLoop }, "would deadlock on the loop thread")
        let result = Mutex([T?](repeating: nil, count: loopCount))
        let done = DispatchGroup()
        for index in 0..<loopCount {
            done.enter()
            let accepted = loops[index].execute { [self] in
                let value = body(self.engine(at: index))
                result.withLock { $0[index] = value }
                done.leave()
            }
            if !accepted { done.leave() }
        }
        done.wait()
        return result.withLock { $0 }
    }
}
