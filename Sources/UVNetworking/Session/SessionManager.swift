import Dispatch
import Foundation
import Synchronization

/// Creates and runs tasks, like AFURLSessionManager: every task's connection lives on one event
/// loop; responses are serialized on a worker pool; completion handlers run on `completionQueue`
/// inside `completionGroup`.
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
    // the engine is touched only on the loop thread.

    /// The configuration the session was made with.
    public let configuration: SessionConfiguration
    /// The loop that runs this session's connections.
    public let loop: EventLoop
    /// The threads that run this session's serializers.
    public let workers: WorkerPool
    /// `configuration.defaultRequestFields`, checked and encoded once: each request copies
    /// their bytes.
    let defaultRequestFields: EncodedFields
    /// The last request prepared, reused by an equal one (`PreparedRequestCache`).
    let preparedRequests = PreparedRequestCache()
    /// `configuration.cookieStore` and `.proxy`, read per task without copying the configuration.
    let cookieStore: CookieStore?
    let proxies: ProxyConfiguration

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
    }

    private let settings = Mutex(Settings())
    private let registry = TaskRegistry()
    private let nextIdentifier = Atomic<Int>(1)
    /// The optional closures and notification switch (SessionHooks.swift).
    let hooks = SessionHooks()
    /// Security policies and the TLS context (SessionManager+Security.swift).
    let security = Mutex(SessionSecurity())
    /// Loop thread only (set in `init` before any job can run, replaced in a loop job), except in
    /// `deinit`, which hands it to the loop when no job can hold the manager any more.
    private(set) var engine: SessionEngine!
    private static let sharedCompletionGroup = DispatchGroup()

    /// Creates a session on the shared loop and worker pool.
    public init(configuration: SessionConfiguration = .default, loop: EventLoop = .shared, workers: WorkerPool = .shared) {
        self.configuration = configuration
        self.defaultRequestFields = EncodedFields(configuration.defaultRequestFields)
        self.cookieStore = configuration.cookieStore
        self.proxies = configuration.proxy
        self.loop = loop
        self.workers = workers
        self.engine = SessionEngine(loop: loop, workers: workers, configuration: configuration, manager: self)
    }

    /// Replaces the default policy (AFNetworking's `securityPolicy` setter). Connections opened
    /// under the old policy are not reused for new requests.
    ///
    /// `HTTPSessionManager` throws when the policy pins and its base URL is not https.
    // In the class body, not the extension, so that HTTPSessionManager can refine it.
    public func setSecurityPolicy(_ policy: SecurityPolicy) throws(NetworkingError) {
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
    public var responseSerializer: any ResponseSerializer {
        get { settings.withLock { $0.responseSerializer } }
        set { settings.withLock { $0.responseSerializer = newValue } }
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

    func deliverySnapshot() -> DeliveryTarget {
        let hooks = self.hooks.activeSnapshot()
        return settings.withLock {
            DeliveryTarget(queue: deliveryQueue(of: $0), group: $0.completionGroup ?? Self.sharedCompletionGroup,
                           serializer: $0.responseSerializer, plainValidation: $0.plainValidation, hooks: hooks)
        }
    }

    /// Where handlers run, and the group they run in.
    func deliveryQueue() -> (queue: DeliveryQueue, group: DispatchGroup) {
        settings.withLock { (deliveryQueue(of: $0), $0.completionGroup ?? Self.sharedCompletionGroup) }
    }

    private func deliveryQueue(of settings: Settings) -> DeliveryQueue {
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
    public func dataTask(with request: Request,
                         uploadProgress: (@Sendable (Progress) -> Void)? = nil,
                         downloadProgress: (@Sendable (Progress) -> Void)? = nil,
                         completionHandler: SessionTask.CompletionHandler? = nil) -> DataTask {
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
            perform(operation, for: task, on: engine!)
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
    public func invalidateSessionCancelingTasks(_ cancelPendingTasks: Bool, resetSession: Bool) {
        invalidate(cancelingTasks: cancelPendingTasks, resetSession: resetSession) {}
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
    /// `invalidateSessionCancelingTasks` is the synchronous way.
    public func shutdown() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            invalidate(cancelingTasks: false, resetSession: false) { continuation.resume() }
        }
    }

    /// `invalidateSessionCancelingTasks`, then `done` once the old session has no task or
    /// connection left (on the loop, or on the caller's thread when the loop is shut down).
    private func invalidate(cancelingTasks cancelPendingTasks: Bool, resetSession: Bool, done: @escaping @Sendable () -> Void) {
        let accepted = loop.execute { [self] in
            let old = self.engine!
            if resetSession {
                self.engine = SessionEngine(loop: self.loop, workers: self.workers, configuration: self.configuration, manager: self)
            }
            old.invalidate(cancelPending: cancelPendingTasks) { [self] in
                self.sessionBecameInvalid()
                done()
            }
        }
        guard accepted else {
            // The loop's shutdown already ended every task and closed every connection.
            sessionBecameInvalid()
            done()
            return
        }
    }

    private func sessionBecameInvalid() {
        let target = deliverySnapshot()
        guard let hook = sessionDidBecomeInvalid else { return }
        target.queue.async(group: target.group) { hook() }
    }

    /// No task of this manager is left (each holds its manager), but its connections may be: they
    /// close on the loop, where the engine lives.
    deinit {
        let engine = LoopBound(engine!, loop: loop)
        // Refused only once the loop has shut down, which closed the engine's connections.
        _ = loop.execute { engine.value.managerReleased() }
    }

    /// Open or opening connections of the current session; asks the loop and waits.
    public var openConnectionCount: Int {
        precondition(!loop.inLoop, "would deadlock on the loop thread")
        EventLoop.assertNotOnLoopThread("SessionManager.openConnectionCount")
        let result = Mutex(0)
        let done = DispatchSemaphore(value: 0)
        let accepted = loop.execute { [self] in
            result.withLock { $0 = self.engine.connectionCount }
            done.signal()
        }
        // A loop that was shut down closed every connection.
        guard accepted else { return 0 }
        done.wait()
        return result.withLock { $0 }
    }
}
