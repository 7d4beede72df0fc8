import Dispatch
import Foundation
import Synchronization
import UVNetworking

/// What the progress line knows of the network: a general `NetworkReachabilityManager` on the
/// run's loop, started by the run's first URL whose host is not loopback and stopped at the end
/// of the run.
///
/// A run whose hosts are all loopback never starts it (no netlink socket) and never says
/// "network unreachable": its requests do not need a default route. Made only when the progress
/// line is drawn.
final class NetworkWatch: Sendable {
    private let reachability: NetworkReachabilityManager
    private let loopback: LoopbackHosts
    /// Set by the first URL whose host is not loopback; read by the progress line's ticks.
    private let seesRemoteHost = Atomic<Bool>(false)

    /// A watch on `loop` (the run's session's first loop) that does not start yet. Its
    /// transitions are delivered on `queue` (the runner's): uvfetch never runs the main queue,
    /// where they would wait, holding the manager, until the process ends. The line reads the
    /// manager's `status` at each tick, so nothing observes them there.
    init(loop: EventLoop, workers: WorkerPool, queue: DispatchQueue, loopback: LoopbackHosts) {
        reachability = NetworkReachabilityManager(loop: loop, workers: workers)
        reachability.statusChangeQueue = queue
        self.loopback = loopback
    }

    /// Looks at a URL the run will fetch: the first whose host is not loopback starts the
    /// manager. Call from the thread that reads the input, never after `stop()`. Once started,
    /// one relaxed load per URL.
    func note(_ url: URL) {
        guard !seesRemoteHost.load(ordering: .relaxed) else { return }
        guard let host = url.host, !loopback.contains(host) else { return }
        seesRemoteHost.store(true, ordering: .relaxed)
        reachability.startMonitoring()
    }

    /// Whether the line says "network unreachable" now.
    var isNetworkUnreachable: Bool {
        Self.saysUnreachable(reachability.status, seesRemoteHost: seesRemoteHost.load(ordering: .relaxed))
    }

    /// Whether the manager is monitoring (for tests: a loopback run never starts it).
    var isMonitoring: Bool { reachability.isMonitoring }

    /// Stops the manager, closing its netlink socket, at the end of the run (after the input was
    /// read). The line no longer says unreachable afterwards (the status is unknown again).
    func stop() {
        reachability.stopMonitoring()
    }

    /// The rule: only a known `.notReachable`, and only for a run with a host beyond loopback;
    /// `.unknown` (no reading yet) keeps the rate.
    static func saysUnreachable(_ status: NetworkReachabilityStatus, seesRemoteHost: Bool) -> Bool {
        seesRemoteHost && status == .notReachable
    }
}
