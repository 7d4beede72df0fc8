import Foundation
import Synchronization

/// Watches whether the network, a host or an address can be reached, and says so when it
/// changes: AFNetworking's AFNetworkReachabilityManager on Linux.
///
/// **The status is advisory.** Never hold a request back because the manager says
/// `.notReachable`, and never skip the error handling of one because it says `.reachable`: the
/// request itself is the only test of whether it can succeed (a route may lead nowhere; a
/// network may come back a moment before the manager says so). AFNetworking's users were told
/// the same, and gating requests on reachability was its most common misuse. Use the status to
/// explain a failure, to pause background work, and to retry when the network returns.
///
/// **What "reachable" means on Linux.** The kernel's routing tables, read over rtnetlink: a target
/// is reachable when a route leads to it over an interface that is up, has carrier and has an
/// address; `.reachable` carries the kind of that interface (from sysfs: Wi-Fi, cellular (WWAN),
/// Ethernet, or other, loopback among them). The general manager (`shared`, `init(loop:workers:)`)
/// asks for a default route, IPv4 or IPv6. A domain is resolved through the library's own DNS
/// (the hosts file first; no answer means `.notReachable`) and is reachable when one of its
/// addresses is. Nothing is sent to the target: no ping, no probe, no polling.
///
/// **Monitoring.** `startMonitoring()` opens one netlink socket per manager, watched by the
/// manager's event loop (no thread of its own, no timer while nothing changes), and reads the
/// tables once; `stopMonitoring()`, or the last reference to the manager going away, closes it.
/// Changes that come in a burst (a link going down takes its addresses and routes with it) are
/// settled into one reading, so each transition is reported once, in order, on
/// `statusChangeQueue`: to the status-change handler, then as
/// `Notification.Name.networkingReachabilityDidChange`, then to every `statusChanges` stream.
/// If the socket cannot be opened or fails, or the loop shuts down, monitoring ends, the status
/// is `.unknown` and `monitoringError` says why.
///
/// Thread-safe: every member may be called from any thread.
public final class NetworkReachabilityManager: Sendable {
    /// The general manager on `EventLoop.shared`: is there a default route? AFNetworking's
    /// sharedManager. It lives as long as the process and monitors only once started.
    public static let shared = NetworkReachabilityManager()

    /// The loop that watches the netlink socket.
    let loop: EventLoop
    /// The threads that read sysfs.
    let workers: WorkerPool
    /// What the manager watches.
    let target: ReachabilityMonitor.Target
    /// Where interface kinds are read from.
    let classifier: InterfaceClassifier

    private struct State {
        var status = NetworkReachabilityStatus.unknown
        /// The loop side while monitoring; nil otherwise.
        var shell: LoopBound<ReachabilityShell>?
        /// Increased at each start and end of monitoring: a late report of an earlier shell is
        /// dropped.
        var generation: UInt64 = 0
        var error: NetworkReachabilityError?
        var streams: [Int: ReachabilityDelivery.Stream] = [:]
        var nextStream = 0
    }

    private let state = Mutex(State())
    let delivery = ReachabilityDelivery()

    /// The general manager: reachable when there is a default route (IPv4 or IPv6) over a usable
    /// interface. Its socket is watched by `loop`; `workers` read interface kinds from sysfs.
    public convenience init(loop: EventLoop = .shared, workers: WorkerPool = .shared) {
        self.init(target: .general, loop: loop, workers: workers)
    }

    /// A manager for a host name (AFNetworking's managerForDomain:): resolved through the
    /// library's DNS (hosts file, then DNS; again after each change of the network), reachable
    /// when a usable route leads to one of its addresses. A name that does not resolve is
    /// `.notReachable`. An IP literal is taken as it is.
    public convenience init(domain: String, loop: EventLoop = .shared, workers: WorkerPool = .shared) {
        self.init(target: .host(domain), loop: loop, workers: workers)
    }

    /// A manager for one address (AFNetworking's managerForAddress:): "127.0.0.1", "::1",
    /// "2001:db8::1" (brackets allowed). Nil when `address` is not an IPv4 or IPv6 literal.
    public convenience init?(address: String, loop: EventLoop = .shared, workers: WorkerPool = .shared) {
        var literal = Substring(address)
        if literal.hasPrefix("["), literal.hasSuffix("]") { literal = literal.dropFirst().dropLast() }
        guard let parsed = SocketAddress(numericHost: String(literal), port: 0) else { return nil }
        self.init(target: .address(parsed), loop: loop, workers: workers)
    }

    /// A manager for `target`; tests give their own sysfs tree.
    init(target: ReachabilityMonitor.Target, loop: EventLoop, workers: WorkerPool,
         classifier: InterfaceClassifier = InterfaceClassifier()) {
        self.target = target
        self.loop = loop
        self.workers = workers
        self.classifier = classifier
    }

    deinit {
        let (shell, streams) = state.withLock { state in
            (state.shell, Array(state.streams.values))
        }
        // Refused when the loop is shut down: it has closed the shell already.
        if let shell { loop.execute { shell.value.close() } }
        for stream in streams { stream.finish() }
    }

    // MARK: Status

    /// The last reading: `.unknown` before monitoring starts, until its first reading, after
    /// `stopMonitoring()`, and when monitoring could not go on (`monitoringError`). Advisory:
    /// never gate a request on it.
    public var status: NetworkReachabilityStatus {
        state.withLock { $0.status }
    }

    /// Whether `status` is `.reachable`, over any interface.
    public var isReachable: Bool {
        if case .reachable = status { return true }
        return false
    }

    /// Whether `status` is `.reachable(.ethernet)`.
    public var isReachableViaEthernet: Bool { status == .reachable(.ethernet) }

    /// Whether `status` is `.reachable(.wifi)`: AFNetworking's isReachableViaWiFi.
    public var isReachableViaWiFi: Bool { status == .reachable(.wifi) }

    /// Whether `status` is `.reachable(.cellular)`: AFNetworking's isReachableViaWWAN.
    public var isReachableViaCellular: Bool { status == .reachable(.cellular) }

    /// `status` in words ("Reachable via WiFi"), see `NetworkReachabilityStatus.localizedDescription`.
    public var localizedStatusString: String { status.localizedDescription }

    /// Whether the manager is monitoring: started, and neither stopped nor ended by a failure.
    public var isMonitoring: Bool {
        state.withLock { $0.shell != nil }
    }

    /// Why monitoring ended by itself or could not start (the netlink socket could not be opened,
    /// failed, or the loop was shut down); nil while monitoring and before the first start.
    public var monitoringError: NetworkReachabilityError? {
        state.withLock { $0.error }
    }

    /// How many `statusChanges` streams are open (for tests: ended ones are forgotten).
    var openStreamCount: Int {
        state.withLock { $0.streams.count }
    }

    // MARK: Monitoring

    /// Starts monitoring: opens the manager's netlink socket on its loop and reads the network's
    /// tables; the first reading is reported as a change from `.unknown`. Does nothing while
    /// monitoring. If the socket cannot be opened (no descriptor left, not permitted) or the loop
    /// is shut down, the status stays `.unknown` and `monitoringError` says why.
    public func startMonitoring() {
        state.withLock { state in
            guard state.shell == nil else { return }
            state.generation &+= 1
            let generation = state.generation
            state.error = nil
            let shell = ReachabilityShell(
                target: target, loop: loop, workers: workers, classifier: classifier,
                report: { [weak self] status in self?.shellReported(status, generation: generation) },
                failed: { [weak self] error in self?.shellFailed(error, generation: generation) })
            let bound = LoopBound(shell, loop: loop)
            // Under the lock: a stop from another thread queues its close after this start.
            if loop.execute({ bound.value.start() }) {
                state.shell = bound
            } else {
                state.error = .loopShutDown
            }
        }
    }

    /// Stops monitoring: closes the netlink socket, sets the status to `.unknown` (without
    /// reporting it: the change is yours) and ends the `statusChanges` streams once the
    /// transitions before it are delivered. Does nothing when not monitoring.
    public func stopMonitoring() {
        state.withLock { state in
            guard let shell = state.shell else { return }
            state.shell = nil
            state.generation &+= 1
            state.status = .unknown
            // Refused when the loop is shut down: it has closed the shell already.
            loop.execute { shell.value.close() }
            delivery.finish(Array(state.streams.values))
            state.streams.removeAll()
        }
    }

    /// A reading of the current shell (on the loop thread).
    private func shellReported(_ status: NetworkReachabilityStatus, generation: UInt64) {
        state.withLock { state in
            guard state.generation == generation, state.shell != nil, state.status != status else { return }
            state.status = status
            // Posted under the lock: transitions and a stop's end of the streams keep their order.
            delivery.post(status, from: self, to: Array(state.streams.values))
        }
    }

    /// The current shell closed itself (on the loop thread): monitoring has ended; a status
    /// other than `.unknown` is reported as changing to it.
    private func shellFailed(_ error: NetworkReachabilityError, generation: UInt64) {
        state.withLock { state in
            guard state.generation == generation, state.shell != nil else { return }
            state.shell = nil
            state.generation &+= 1
            state.error = error
            if state.status != .unknown {
                state.status = .unknown
                delivery.post(.unknown, from: self, to: Array(state.streams.values))
            }
            delivery.finish(Array(state.streams.values))
            state.streams.removeAll()
        }
    }

    // MARK: Observing

    /// The queue the status-change handler, the notification and the `statusChanges` streams are
    /// served on; nil (the default) means the main queue, as in AFNetworking. Transitions keep
    /// their order even on a concurrent queue. A change applies to the deliveries scheduled
    /// afterwards.
    public var statusChangeQueue: DispatchQueue? {
        get { delivery.observers.settings.withLock { $0.queue } }
        set { delivery.observers.settings.withLock { $0.queue = newValue } }
    }

    /// Sets the closure called with the new status at each transition, on `statusChangeQueue`,
    /// before the notification is posted (AFNetworking's setReachabilityStatusChangeBlock:); nil
    /// removes it. The manager holds it: a closure that captures the manager strongly keeps it
    /// (and its socket) alive until the closure is replaced.
    public func setReachabilityStatusChangeHandler(_ handler: (@Sendable (NetworkReachabilityStatus) -> Void)?) {
        delivery.observers.settings.withLock { $0.handler = handler }
    }

    /// The status changes as an AsyncSequence: a new stream at each access, which yields the
    /// current status first when it is known (not `.unknown`), then each transition once, in
    /// order, as the handler sees it; it ends at `stopMonitoring()`, when monitoring ends by
    /// itself, or when the manager goes away. A stream taken before `startMonitoring()` waits
    /// for the first reading. A consumer that falls behind loses nothing: the transitions it has
    /// not read wait in its stream (a few bytes each); one that drops its stream is forgotten at
    /// once. A stream does not keep the manager alive.
    public var statusChanges: AsyncStream<NetworkReachabilityStatus> {
        let (stream, continuation) = AsyncStream.makeStream(of: NetworkReachabilityStatus.self)
        let identifier = state.withLock { state -> Int in
            let identifier = state.nextStream
            state.nextStream += 1
            state.streams[identifier] = continuation
            if state.status != .unknown { continuation.yield(state.status) }
            return identifier
        }
        // Outside the lock: the closure takes it, and runs at once if the stream has ended.
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.streams.removeValue(forKey: identifier) }
        }
        return stream
    }
}
