// The `reachability-watch` scenario: reachability managers in whatever network namespace the
// probe runs in, every reading printed with a CLOCK_MONOTONIC stamp, so a test that changes the
// network can check what was reported, once, in order, and how soon.

import Dispatch
import Foundation
import Glibc
import Synchronization
import UVNetworking

/// Lines on standard output, whole and flushed, from any thread.
final class ProbeLines: Sendable {
    private let lock = Mutex(())

    func write(_ line: String) {
        lock.withLock { _ in
            let bytes = Array((line + "\n").utf8)
            var offset = 0
            while offset < bytes.count {
                let written = bytes[offset...].withUnsafeBytes { Glibc.write(STDOUT_FILENO, $0.baseAddress, $0.count) }
                if written <= 0 { if errno == EINTR { continue }; return }
                offset += written
            }
        }
    }
}

/// CLOCK_MONOTONIC in milliseconds, the clock the test reads too.
func monotonicMilliseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
}

/// A status as one word: `unknown`, `notReachable`, `reachable:ethernet` (wifi, cellular, other).
func statusToken(_ status: NetworkReachabilityStatus) -> String {
    switch status {
    case .unknown: "unknown"
    case .notReachable: "notReachable"
    case .reachable(.ethernet): "reachable:ethernet"
    case .reachable(.wifi): "reachable:wifi"
    case .reachable(.cellular): "reachable:cellular"
    case .reachable(.other): "reachable:other"
    }
}

/// Arguments: LABEL=general, LABEL=address:IP or LABEL=domain:NAME, one manager each. Prints
/// `fds N` (descriptors open after warming the loop, the workers and Dispatch), then
/// `starting MS` and `started MS` around the first startMonitoring calls, then per reading `event MS LABEL STATUS` (the handler, on one serial queue),
/// `note MS LABEL STATUS` (the notification, after it) and `stream MS LABEL STATUS` (each
/// manager's `statusChanges`). Commands on standard input, one per line: `stop` (every manager's
/// stopMonitoring, then `stopped MS`), `start`, `status` (`status LABEL STATUS` per manager),
/// `fds` (`fds N`, and `fd N TARGET` per descriptor). End of input stops everything and exits 0.
func reachabilityWatch(_ arguments: [String]) -> Never {
    let out = ProbeLines()
    let queue = DispatchQueue(label: "probe.reachability")
    warmUpForDescriptorCount(queue)
    out.write("fds \(openFileDescriptorCount())")

    var managers: [(label: String, manager: NetworkReachabilityManager)] = []
    for argument in arguments {
        let parts = argument.split(separator: "=", maxSplits: 1).map(String.init)
        guard parts.count == 2 else { finish(64, "not LABEL=SPEC: \(argument)") }
        let label = parts[0], spec = parts[1]
        let manager: NetworkReachabilityManager
        if spec == "general" {
            manager = NetworkReachabilityManager()
        } else if spec.hasPrefix("address:") {
            guard let made = NetworkReachabilityManager(address: String(spec.dropFirst("address:".count))) else { finish(1, "init(address:) refused \(spec)") }
            manager = made
        } else if spec.hasPrefix("domain:") {
            manager = NetworkReachabilityManager(domain: String(spec.dropFirst("domain:".count)))
        } else {
            finish(64, "unknown manager \(spec)")
        }
        manager.statusChangeQueue = queue
        manager.setReachabilityStatusChangeHandler { status in
            dispatchPrecondition(condition: .onQueue(queue))
            out.write("event \(monotonicMilliseconds()) \(label) \(statusToken(status))")
        }
        _ = NotificationCenter.default.addObserver(forName: .networkingReachabilityDidChange, object: manager, queue: nil) { note in
            let status = note.userInfo?[NetworkingReachabilityNotificationKey.status] as? NetworkReachabilityStatus
            out.write("note \(monotonicMilliseconds()) \(label) \(status.map(statusToken) ?? "missing")")
        }
        managers.append((label, manager))
    }

    func startAll() {
        for (label, manager) in managers {
            let stream = manager.statusChanges
            Task.detached {
                for await status in stream { out.write("stream \(monotonicMilliseconds()) \(label) \(statusToken(status))") }
                out.write("stream-end \(monotonicMilliseconds()) \(label)")
            }
            manager.startMonitoring()
        }
        out.write("started \(monotonicMilliseconds())")
    }

    out.write("starting \(monotonicMilliseconds())")
    startAll()
    while let command = readLine() {
        switch command {
        case "stop":
            for (_, manager) in managers { manager.stopMonitoring() }
            out.write("stopped \(monotonicMilliseconds())")
        case "start":
            startAll()
        case "status":
            for (label, manager) in managers { out.write("status \(label) \(statusToken(manager.status)) \(manager.isMonitoring)") }
        case "fds":
            out.write("fds \(openFileDescriptorCount())")
            for (fd, target) in descriptorTargets() { out.write("fd \(fd) \(target)") }
        default:
            out.write("unknown command \(command)")
        }
    }
    for (_, manager) in managers { manager.stopMonitoring() }
    queue.sync {}
    finish(0, "ok")
}

/// Opens what the loop, the worker pool and Dispatch open once, so the count that follows is
/// a baseline the managers' descriptors come and go against.
private func warmUpForDescriptorCount(_ queue: DispatchQueue) {
    let done = DispatchSemaphore(value: 0)
    _ = EventLoop.shared.execute { done.signal() }
    guard done.wait(timeout: .now() + 5) == .success else { finish(2, "hang: the shared loop never ran a job") }
    _ = WorkerPool.shared.submit { done.signal() }
    guard done.wait(timeout: .now() + 5) == .success else { finish(2, "hang: the shared worker pool never ran a job") }
    queue.sync {}
    let task = Task.detached { 1 }
    DispatchQueue.global().async { Task { _ = await task.value; done.signal() } }
    _ = done.wait(timeout: .now() + 5)
    usleep(100_000)
}

/// Every open descriptor and what it points at, for saying which one stayed open.
private func descriptorTargets() -> [(Int32, String)] {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return names.compactMap(Int32.init).sorted().map { fd in
        (fd, (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)")) ?? "?")
    }
}
