import ServiceLifecycle
import UVNetworking

/// Runs a `SessionManager` as a swift-service-lifecycle `Service`: it keeps the session up while
/// the service group runs, and drains it when the group shuts down, so a SIGTERM lets the
/// requests in flight finish instead of cutting them off.
///
/// `run()` waits for the group's graceful shutdown (a signal in
/// `ServiceGroupConfiguration.gracefulShutdownSignals`, `triggerGracefulShutdown()`, or another
/// service ending) and then calls `manager.shutdown(deadline:)` with `gracePeriod`: the session
/// takes no new task, its running tasks may finish within the grace period, those still
/// running then are cancelled, and every connection closes; `run()` returns once that is done.
/// When the group cancels the service instead (a cancellation signal, the group's
/// `maximumGracefulShutdownDuration` passed, or the service's task cancelled), the running tasks
/// are cancelled at once and `run()` returns as soon as they have ended. It never throws.
///
/// A group shuts its services down in the reverse of their order, each after the one after it
/// has returned: list this service before the services that use the manager, so that they stop
/// making requests first and the session then drains what they left in flight.
///
/// ```swift
/// let manager = SessionManager()
/// let group = ServiceGroup(configuration: ServiceGroupConfiguration(
///     services: [SessionManagerService(manager: manager, gracePeriod: .seconds(5)), worker],
///     gracefulShutdownSignals: [.sigterm, .sigint],
///     logger: logger))
/// try await group.run()
/// ```
///
/// The loop and the worker pool are not shut down: the manager's defaults, `EventLoop.shared`
/// and `WorkerPool.shared`, live as long as the process. A service that made its own loop or
/// pool shuts it down after `run()` returned. `SessionManager.shared` refuses to shut down (see
/// its documentation): with it, `run()` returns at shutdown without draining anything.
public struct SessionManagerService: Service {
    /// The session this service keeps up and drains.
    public let manager: SessionManager
    /// How long running tasks may take to finish once the group shuts down gracefully.
    public var gracePeriod: Duration

    /// A service for `manager`, whose running tasks get `gracePeriod` to finish at shutdown.
    public init(manager: SessionManager, gracePeriod: Duration = .seconds(10)) {
        self.manager = manager
        self.gracePeriod = gracePeriod
    }

    /// Waits for graceful shutdown or cancellation, then drains the session (see the type's
    /// notes).
    public func run() async {
        // Throws only when the task is cancelled: then the shutdown below cancels at once.
        try? await gracefulShutdown()
        await manager.shutdown(gracePeriod: Task.isCancelled ? .zero : gracePeriod)
    }
}
