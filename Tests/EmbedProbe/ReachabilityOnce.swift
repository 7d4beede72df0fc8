import Dispatch
import Foundation
import Glibc
import Synchronization
@_spi(Testing) import UVNetworking

/// `reachability-once [TARGET...]`: one reading per target, then stop. A target is `general`,
/// an IP literal, or `domain:NAME` (`general` when none is given). Prints "TARGET: STATUS in N
/// ms" per target (the time from startMonitoring to the reading, measured in 10 ms steps), then
/// "fds ok" once stopping has closed every descriptor monitoring opened. Run by a test inside a
/// namespace of its own (unshare -n, loopback down): what the managers say with no network at
/// all. Exits 2 when a reading never comes, 1 when a descriptor stays open.
func reachabilityOnce(_ arguments: [String]) -> Never {
    let targets = arguments.isEmpty ? ["general"] : arguments
    _ = EventLoop.shared.name
    let baseline = openFileDescriptorCount()
    for target in targets {
        let manager: NetworkReachabilityManager
        if target == "general" {
            manager = NetworkReachabilityManager()
        } else if target.hasPrefix("domain:") {
            manager = NetworkReachabilityManager(domain: String(target.dropFirst("domain:".count)))
        } else if let made = NetworkReachabilityManager(address: target) {
            manager = made
        } else {
            finish(64, "not general, an address or domain:NAME: \(target)")
        }
        manager.statusChangeQueue = DispatchQueue(label: "probe.reachability")
        let started = Date()
        manager.startMonitoring()
        guard eventually(5, { manager.status != .unknown || !manager.isMonitoring }) else { finish(2, "hang: no reading for \(target)") }
        let milliseconds = Int(Date().timeIntervalSince(started) * 1000)
        let error = manager.monitoringError.map { " (\($0))" } ?? ""
        FileHandle.standardOutput.write(Data("\(target): \(manager.localizedStatusString)\(error) in \(milliseconds) ms\n".utf8))
        manager.stopMonitoring()
    }
    guard eventually(5, { openFileDescriptorCount() <= baseline }) else { finish(1, "fds: baseline \(baseline), now \(openFileDescriptorCount())") }
    finish(0, "fds ok")
}

/// `reachability-without-descriptors`: no descriptor left for the netlink socket. The manager
/// must stay unknown, stop monitoring by itself and say EMFILE; with descriptors back, a new
/// start gives a reading.
func reachabilityWithoutDescriptors() -> Never {
    let manager = NetworkReachabilityManager(address: "127.0.0.1")!
    manager.statusChangeQueue = DispatchQueue(label: "probe.reachability")
    _ = EventLoop.shared.name
    var limit = rlimit()
    getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    let saved = limit
    limit.rlim_cur = rlim_t(openFileDescriptorCount() + 64)
    guard setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { finish(1, "setrlimit failed") }
    var fillers: [Int32] = []
    while true {
        let fd = Glibc.open("/dev/null", O_RDONLY)
        if fd < 0 { break }
        fillers.append(fd)
    }
    manager.startMonitoring()
    let ended = eventually(5) { !manager.isMonitoring }
    let status = manager.status, error = manager.monitoringError
    for fd in fillers { close(fd) }
    var restored = saved
    setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &restored)
    guard ended else { finish(2, "hang: still monitoring without a socket") }
    guard status == .unknown, let error, error.reason == .socketFailed, error.errorNumber == EMFILE else {
        finish(1, "expected unknown and EMFILE, got \(status) \(String(describing: error))")
    }
    manager.startMonitoring()
    guard eventually(5, { manager.status != .unknown }), manager.monitoringError == nil else {
        finish(1, "no reading once descriptors were back: \(manager.status) \(String(describing: manager.monitoringError))")
    }
    finish(0, "ok: \(error); then \(manager.localizedStatusString)")
}

/// `reachability-main-queue`: no `statusChangeQueue` set, a process that serves the main queue
/// with dispatchMain(), as an app would. The first reading must reach the handler and then the
/// notification, both on the main thread, once each; stopping then closes the socket.
func reachabilityOnMainQueue() -> Never {
    let manager = NetworkReachabilityManager(address: "127.0.0.1")!
    let seen = SeenStatuses<String>()
    _ = EventLoop.shared.name
    // Before the baseline: the first timer opens libdispatch's own descriptors.
    DispatchQueue.global().asyncAfter(deadline: .now() + 10) {
        finish(2, "hang: no reading on the main queue (monitoring: \(manager.isMonitoring), status: \(manager.status))")
    }
    let baseline = openFileDescriptorCount()
    // dispatchMain() ends the main thread and serves the main queue from another: ask the queue.
    let mainKey = DispatchSpecificKey<Bool>()
    DispatchQueue.main.setSpecific(key: mainKey, value: true)
    let onMain: @Sendable () -> Bool = { DispatchQueue.getSpecific(key: mainKey) == true }
    manager.setReachabilityStatusChangeHandler { status in
        guard onMain() else { finish(1, "handler called off the main thread") }
        seen.items.withLock { $0.append("handler \(status.localizedDescription)") }
    }
    let token = NotificationCenter.default.addObserver(forName: .networkingReachabilityDidChange, object: manager, queue: nil) { note in
        guard onMain() else { finish(1, "notification posted off the main thread") }
        let status = note.userInfo?[NetworkingReachabilityNotificationKey.status] as? NetworkReachabilityStatus
        seen.items.withLock { $0.append("notification \(status?.localizedDescription ?? "none")") }
        manager.stopMonitoring()
        // Later on main: anything else delivered meanwhile would be seen.
        DispatchQueue.main.asyncAfter(deadline: .now() + 0.2) {
            let all = seen.items.withLock { $0 }
            guard all == ["handler Reachable", "notification Reachable"] else { finish(1, "seen: \(all)") }
            // Netlink sockets rather than every descriptor: libdispatch may open one of its own
            // for the main queue's timer, which is not the manager's.
            guard eventually(5, { openNetlinkSocketCount() == 0 }) else {
                finish(1, "netlink sockets still open: \(openNetlinkSocketCount()) (fds: baseline \(baseline), now \(openFileDescriptorCount()))")
            }
            finish(0, "ok: \(all.joined(separator: ", ")) on main")
        }
    }
    _ = token
    manager.startMonitoring()
    dispatchMain()
}

/// `reachability-overrun`: run under `unshare -n`, with a netlink receive buffer so small that
/// a burst of changes overruns it. The general manager must say Not Reachable, then Reachable
/// once a default route appears, then Not Reachable once it is removed, each once, while a flood
/// of dummy links comes and goes in between; the loop must not spin afterwards, and stopping
/// closes every descriptor. Prints the overruns read and the CPU time of a quiet second.
func reachabilityOverrun() -> Never {
    ReachabilityTesting.receiveBufferBytes.store(1, ordering: .relaxed)  // the kernel's minimum
    _ = EventLoop.shared.name
    let baseline = openFileDescriptorCount()
    let manager = NetworkReachabilityManager()
    manager.statusChangeQueue = DispatchQueue(label: "probe.reachability")
    let seen = SeenStatuses<NetworkReachabilityStatus>()
    manager.setReachabilityStatusChangeHandler { status in seen.items.withLock { $0.append(status) } }
    manager.startMonitoring()
    guard eventually(5, { manager.status != .unknown }) else { finish(2, "hang: no first reading") }
    var flood = ""
    // veth pairs (a kernel may lack the dummy driver); both ends up, so each has carrier.
    for index in 0..<75 {
        flood += "link add flood\(index) type veth peer name peer\(index)\n"
        flood += "link set flood\(index) up\nlink set peer\(index) up\n"
        flood += "addr add 198.51.100.\(index + 1)/32 dev flood\(index)\naddr add 198.51.100.\(index + 101)/32 dev peer\(index)\n"
    }
    let up = "link add uplink type veth peer name downlink\nlink set downlink up\nlink set uplink up\n"
        + "addr add 192.0.2.1/24 dev uplink\nroute add default via 192.0.2.254 dev uplink\n"
    var removal = ""
    for index in 0..<75 { removal += "link del flood\(index)\n" }
    // The kind is not checked: sysfs, mounted outside this namespace, does not show its links.
    let steps: [(String, ((NetworkReachabilityStatus) -> Bool)?)] = [
        (flood, nil), (up, { if case .reachable = $0 { true } else { false } }), (removal, nil),
        ("route del default\n", { $0 == .notReachable }),
    ]
    for (script, expected) in steps {
        guard runIP(script) else { finish(1, "ip -batch failed") }
        if let expected {
            guard eventually(5, { expected(manager.status) }) else { finish(1, "status \(manager.status), seen \(seen.items.withLock { $0 }), error \(String(describing: manager.monitoringError))") }
        }
    }
    // A quiet second: a loop that spins (reading, dumping again) would use it all.
    let before = cpuSeconds()
    usleep(1_000_000)
    let busy = cpuSeconds() - before
    let all = seen.items.withLock { $0 }
    let overruns = ReachabilityTesting.overruns.load(ordering: .relaxed)
    manager.stopMonitoring()
    guard all.count == 3, all.first == .notReachable, all.last == .notReachable, case .reachable = all[1] else { finish(1, "seen \(all) (\(overruns) overruns)") }
    guard busy < 0.5 else { finish(1, "the loop spins: \(busy) s of CPU in a quiet second") }
    guard eventually(5, { openFileDescriptorCount() <= baseline }) else { finish(1, "fds: baseline \(baseline), now \(openFileDescriptorCount())") }
    finish(0, "ok: \(overruns) overruns, \(Int(busy * 1000)) ms of CPU in a quiet second")
}

/// Runs `ip -batch FILE` with `script` in the file; true when it succeeded. posix_spawn and
/// waitpid: Foundation's Process.waitUntilExit missed the end of a child here.
private func runIP(_ script: String) -> Bool {
    let file = "/tmp/uvnetworking-probe-\(getpid()).ip"
    guard FileManager.default.createFile(atPath: file, contents: Data(script.utf8)) else { return false }
    defer { unlink(file) }
    let path = FileManager.default.isExecutableFile(atPath: "/usr/sbin/ip") ? "/usr/sbin/ip" : "/sbin/ip"
    let arguments = [path, "-batch", file]
    var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var child: pid_t = 0
    guard posix_spawn(&child, path, nil, nil, &argv, environ) == 0 else { return false }
    var status: Int32 = 0
    while waitpid(child, &status, 0) < 0 && errno == EINTR {}
    return status == 0
}

/// The CPU time (user and system) this process has used, in seconds.
private func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

/// What the observers of one manager saw, in order; shared with their closures.
private final class SeenStatuses<Item: Sendable>: Sendable {
    let items = Mutex<[Item]>([])
}

/// How many of this process's descriptors are netlink sockets (SO_DOMAIN says AF_NETLINK).
func openNetlinkSocketCount() -> Int {
    guard let directory = opendir("/proc/self/fd") else { return -1 }
    defer { closedir(directory) }
    var count = 0
    while let entry = readdir(directory) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        guard let descriptor = Int32(name) else { continue }
        var domain: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        if getsockopt(descriptor, SOL_SOCKET, SO_DOMAIN, &domain, &length) == 0, domain == AF_NETLINK { count += 1 }
    }
    return count
}
