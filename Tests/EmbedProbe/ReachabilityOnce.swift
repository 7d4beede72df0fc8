import Dispatch
import Foundation
import Glibc
import UVNetworking

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
