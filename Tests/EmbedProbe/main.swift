// uvnetworking-embed-probe: runs one way of embedding the library that once ended the process,
// chosen by argv[1], so a test can run it in a child process and see a crash as a failed test
// rather than the end of the test run. Prints what it saw; exits 0 when the library behaved,
// 1 when a task ended the wrong way, 2 when something hung, 64 for an unknown scenario.

import Dispatch
import Foundation
import Glibc
import HTTPTypes
import LoopbackDNSServer
import LoopbackHTTPServer
import UVNetworking

/// Ends the probe with `status` after printing `message`.
func finish(_ status: Int32, _ message: String) -> Never {
    FileHandle.standardOutput.write(Data((message + "\n").utf8))
    exit(status)
}

/// The number of open file descriptors of this process.
func openFileDescriptorCount() -> Int {
    guard let directory = opendir("/proc/self/fd") else { return -1 }
    defer { closedir(directory) }
    var count = 0
    while readdir(directory) != nil { count += 1 }
    // ".", ".." and the directory's own descriptor.
    return count - 3
}

/// Accepts every response as its body, so a task's outcome is its transport outcome.
struct AcceptAll: ResponseSerializer {
    func responseObject(for response: HTTPResponse, data: Data?) throws -> Any? { data }
}

/// Runs one GET on `manager` and waits for its completion: nil on success, else the error code
/// (the probe ends with status 2 when the completion never comes).
func fetch(_ manager: SessionManager, _ url: String, timeout: Double = 10) -> String? {
    let done = DispatchSemaphore(value: 0)
    let outcome = OutcomeBox()
    manager.dataTask(with: Request(url: URL(string: url)!), completionHandler: { _, _, error in
        outcome.set(error)
        done.signal()
    }).resume()
    guard done.wait(timeout: .now() + timeout) == .success else { finish(2, "hang: no completion for \(url)") }
    return outcome.code
}

final class OutcomeBox: @unchecked Sendable {
    private let lock = NSLock()
    private var error: (any Error)?
    private var calls = 0
    func set(_ error: (any Error)?) {
        lock.lock(); defer { lock.unlock() }
        self.error = error
        calls += 1
        if calls > 1 { finish(1, "completion handler called \(calls) times") }
    }
    var code: String? {
        lock.lock(); defer { lock.unlock() }
        guard let error else { return nil }
        return (error as? NetworkingError).map { "\($0.code)" } ?? "\(error)"
    }
}

func makeManager(loop: EventLoop = .shared, workers: WorkerPool = .shared, idleTimeout: Double = 60) -> SessionManager {
    var configuration = SessionConfiguration.default
    configuration.idleConnectionTimeout = idleTimeout
    let manager = SessionManager(configuration: configuration, loop: loop, workers: workers)
    manager.completionQueue = DispatchQueue(label: "probe.completions")
    manager.responseSerializer = AcceptAll()
    return manager
}

func startServer() -> (LoopbackHTTPServer, String) {
    let server = LoopbackHTTPServer()
    do {
        let port = try server.start()
        return (server, "http://127.0.0.1:\(port)/items/1")
    } catch {
        finish(1, "server did not start: \(error)")
    }
}

/// Waits up to `timeout` seconds for `condition`.
/// Runs `url` on `manager` with no descriptor left (the limit lowered, the rest filled with
/// /dev/null) and nothing of the session open to close for one, then finishes the probe: 0 when
/// the task failed with connectFailed naming EMFILE and RLIMIT_NOFILE, 2 on a hang, 1 otherwise.
/// `cleanUp` runs once the descriptors are back.
func expectConnectFailedWithoutDescriptors(_ manager: SessionManager, _ url: String, cleanUp: () -> Void = {}) -> Never {
    var limit = rlimit()
    getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    let saved = limit
    var fillers: [Int32] = []
    limit.rlim_cur = rlim_t(openFileDescriptorCount() + 64)
    guard setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { finish(1, "setrlimit failed") }
    while true {
        let fd = Glibc.open("/dev/null", O_RDONLY)
        if fd < 0 { break }
        fillers.append(fd)
    }
    let done = DispatchSemaphore(value: 0)
    let message = OutcomeBox()
    let detail = NSLock()
    nonisolated(unsafe) var text = ""
    manager.dataTask(with: Request(url: URL(string: url)!), completionHandler: { _, _, error in
        detail.lock(); text = (error as? NetworkingError).map { "\($0.code): \($0)" } ?? "\(String(describing: error))"; detail.unlock()
        message.set(error)
        done.signal()
    }).resume()
    let completed = done.wait(timeout: .now() + 10) == .success
    for fd in fillers { close(fd) }
    var restored = saved
    setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &restored)
    cleanUp()
    guard completed else { finish(2, "hang: no completion without descriptors") }
    detail.lock(); let seen = text; detail.unlock()
    guard message.code == "connectFailed", seen.contains("RLIMIT_NOFILE"), seen.contains("EMFILE") else { finish(1, "expected connectFailed naming the limit, got \(seen)") }
    finish(0, "ok: \(seen)")
}

func eventually(_ timeout: Double, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        usleep(10_000)
    }
    return condition()
}

/// A port on 127.0.0.1 whose listener never accepts: the kernel completes connections into its
/// backlog, and nothing ever answers (a response, a TLS handshake).
func silentPort() -> Int {
    let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
    listen(listener, 64)
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) } }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// The temporary files downloads write.
func downloadTemporaryFiles() -> [String] {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: FileManager.default.temporaryDirectory.path)) ?? []
    return names.filter { $0.hasPrefix("UVNetworking-Download-") }
}

let scenario = CommandLine.arguments.dropFirst().first ?? ""
switch scenario {
case "drop-idle":
    // A manager dropped while its keep-alive connection idles; the idle timer fires later.
    let (server, url) = startServer()
    for _ in 0..<5 {
        do {
            let manager = makeManager(idleTimeout: 0.1)
            if let code = fetch(manager, url) { finish(1, "fetch failed: \(code)") }
        }
        // Past the idle timeout, with the freed memory reused meanwhile.
        let junk = (0..<2000).map { _ in [UInt8](repeating: 0xAB, count: 256) }
        usleep(300_000)
        _ = junk.count
    }
    server.stop()
    finish(0, "ok: survived the idle timeout of a dropped manager")

case "drop-many":
    // 300 managers, each used once and dropped at once, their idle timers firing meanwhile.
    let (server, url) = startServer()
    for index in 0..<300 {
        let manager = makeManager(idleTimeout: 0.05)
        if let code = fetch(manager, url) { finish(1, "fetch \(index) failed: \(code)") }
    }
    usleep(500_000)
    server.stop()
    finish(0, "ok: 300 managers dropped")

case "drop-after-resume":
    // Managers dropped right after resume(): their tasks still run to completion (each task
    // holds its manager), then the managers go and their connections close.
    let (server, url) = startServer()
    do {
        let manager = makeManager()
        if let code = fetch(manager, url) { finish(1, "warm-up failed: \(code)") }
        manager.invalidateSessionCancelingTasks(true, resetSession: false)
    }
    usleep(300_000)
    let baseline = openFileDescriptorCount()
    let outcomes = (0..<20).map { _ in OutcomeBox() }
    let group = DispatchGroup()
    weak var lastManager: SessionManager?
    for outcome in outcomes {
        group.enter()
        let manager = makeManager()
        lastManager = manager
        manager.dataTask(with: Request(url: URL(string: url)!), completionHandler: { _, _, error in
            outcome.set(error)
            group.leave()
        }).resume()
    }
    guard group.wait(timeout: .now() + 10) == .success else { finish(2, "hang: a task of a dropped manager never completed") }
    let failures = outcomes.compactMap(\.code)
    if !failures.isEmpty { finish(1, "tasks of dropped managers failed: \(failures)") }
    let gone = eventually(3) { lastManager == nil && openFileDescriptorCount() <= baseline }
    server.stop()
    if !gone { finish(1, "manager alive: \(lastManager != nil); descriptors \(openFileDescriptorCount()), baseline \(baseline)") }
    finish(0, "ok: 20 tasks of dropped managers completed; managers and connections gone")

case "drop-group-mid-flight":
    // A manager over a group of two loops, dropped while its tasks to six origins (spread over
    // both loops) are in flight: they complete, each once, the manager goes, its connections
    // close on both loops; a second one is dropped with tasks hanging on a silent server and
    // the process exits with the loops running.
    let group = try! EventLoopGroup(loopCount: 2, name: "probe.group")
    let servers = (0..<6).map { _ in startServer() }
    func groupManager() -> SessionManager {
        let manager = SessionManager(group: group)
        manager.completionQueue = DispatchQueue(label: "probe.completions")
        manager.responseSerializer = AcceptAll()
        return manager
    }
    do {
        let manager = groupManager()
        for (_, url) in servers { if let code = fetch(manager, url) { finish(1, "warm-up failed: \(code)") } }
        manager.invalidateSessionCancelingTasks(true, resetSession: false)
    }
    usleep(300_000)
    let baseline = openFileDescriptorCount()
    let outcomes = (0..<60).map { _ in OutcomeBox() }
    let done = DispatchGroup()
    weak var dropped: SessionManager?
    do {
        let manager = groupManager()
        dropped = manager
        for (index, outcome) in outcomes.enumerated() {
            done.enter()
            manager.dataTask(with: Request(url: URL(string: servers[index % servers.count].1)!), completionHandler: { _, _, error in
                outcome.set(error)
                done.leave()
            }).resume()
        }
    }
    guard done.wait(timeout: .now() + 10) == .success else { finish(2, "hang: a task of the dropped manager never completed") }
    let failures = outcomes.compactMap(\.code)
    if !failures.isEmpty { finish(1, "tasks of the dropped manager failed: \(failures)") }
    let gone = eventually(3) { dropped == nil && openFileDescriptorCount() <= baseline }
    if !gone { finish(1, "manager alive: \(dropped != nil); descriptors \(openFileDescriptorCount()), baseline \(baseline)") }
    let silent = silentPort()
    do {
        let manager = groupManager()
        // http and https: two origins of the silent port, and the servers' (answered).
        for index in 0..<8 {
            let scheme = index % 2 == 0 ? "http" : "https"
            manager.dataTask(with: Request(url: URL(string: "\(scheme)://127.0.0.1:\(silent)/never")!)).resume()
            manager.dataTask(with: Request(url: URL(string: servers[index % servers.count].1)!)).resume()
        }
    }
    usleep(100_000)
    for (server, _) in servers { server.stop() }
    finish(0, "ok: 60 tasks over 2 loops completed once; manager and connections gone; exited mid-flight")

case "churn":
    // Many managers made, used and dropped (default idle timeout: a minute): their connections
    // must close when they go, so the descriptor count comes back to where it was.
    let (server, url) = startServer()
    do {
        // Warm-up: the loop, the workers and Dispatch open their descriptors once.
        let manager = makeManager()
        if let code = fetch(manager, url) { finish(1, "warm-up failed: \(code)") }
        manager.invalidateSessionCancelingTasks(true, resetSession: false)
    }
    usleep(300_000)
    let baseline = openFileDescriptorCount()
    for index in 0..<200 {
        let manager = makeManager()
        if let code = fetch(manager, url) { finish(1, "fetch \(index) failed: \(code)") }
    }
    let back = eventually(5) { openFileDescriptorCount() <= baseline }
    let now = openFileDescriptorCount()
    server.stop()
    if !back { finish(1, "descriptors: \(now), baseline \(baseline)") }
    finish(0, "ok: descriptors back at baseline \(baseline)")

case "resume-after-loop-shutdown":
    // A task resumed on a manager whose loop was shut down completes with an error.
    let (server, url) = startServer()
    let loop = try! EventLoop(name: "probe.loop")
    let manager = makeManager(loop: loop)
    loop.shutdown()
    let code = fetch(manager, url)
    server.stop()
    guard code == "loopShutDown" else { finish(1, "expected loopShutDown, got \(code ?? "success")") }
    finish(0, "ok: \(code!)")

case "shutdown-loop-mid-task":
    // Tasks in flight (one waiting for a response that never comes, one idle connection) when
    // the loop is shut down: the task ends with loopShutDown, and nothing crashes afterwards
    // when the manager is dropped.
    let silentURL = "http://127.0.0.1:\(silentPort())/never"
    let (server, url) = startServer()
    let loop = try! EventLoop(name: "probe.loop")
    do {
        let manager = makeManager(loop: loop, idleTimeout: 0.3)
        if let code = fetch(manager, url) { finish(1, "fetch failed: \(code)") }
        let done = DispatchSemaphore(value: 0)
        let outcome = OutcomeBox()
        manager.dataTask(with: Request(url: URL(string: silentURL)!), completionHandler: { _, _, error in
            outcome.set(error)
            done.signal()
        }).resume()
        usleep(200_000)
        loop.shutdown()
        guard done.wait(timeout: .now() + 5) == .success else { finish(2, "hang: the task in flight never completed") }
        guard outcome.code == "loopShutDown" else { finish(1, "expected loopShutDown, got \(outcome.code ?? "success")") }
    }
    usleep(600_000)
    server.stop()
    finish(0, "ok: loopShutDown")

case "drop-while-connecting":
    // A connection still in its TLS handshake (the server never answers) when its task is
    // cancelled and its manager dropped; the connect timeout fires later.
    let port = silentPort()
    var baseline = 0
    for round in 0..<4 {
        if round == 1 {
            // After a first round (invalidated, not dropped): the loop, the workers and Dispatch
            // have opened their descriptors.
            usleep(500_000)
            baseline = openFileDescriptorCount()
        }
        var configuration = SessionConfiguration.default
        // Long enough for the cancel to come first on a loaded machine.
        configuration.connectTimeout = 1
        let manager = SessionManager(configuration: configuration)
        manager.completionQueue = DispatchQueue(label: "probe.completions")
        let done = DispatchSemaphore(value: 0)
        let outcome = OutcomeBox()
        let task = manager.dataTask(with: Request(url: URL(string: "https://127.0.0.1:\(port)/")!), completionHandler: { _, _, error in
            outcome.set(error)
            done.signal()
        })
        task.resume()
        usleep(100_000)
        task.cancel()
        guard done.wait(timeout: .now() + 5) == .success else { finish(2, "hang: the cancelled task never completed") }
        guard outcome.code == "cancelled" else { finish(1, "expected cancelled, got \(outcome.code ?? "success")") }
        if round == 0 { manager.invalidateSessionCancelingTasks(true, resetSession: false) }
    }
    usleep(1_300_000)
    // The accepted ends sit in the listener's backlog; only the client's sockets count here.
    let back = eventually(3) { openFileDescriptorCount() <= baseline }
    if !back { finish(1, "descriptors: \(openFileDescriptorCount()), baseline \(baseline)") }
    finish(0, "ok: survived the connect timeout of dropped managers")

case "shutdown-loop-mid-download":
    // A download waiting for its response when the loop shuts down: it completes with
    // loopShutDown (its file closes on a worker after the loop stopped) and leaves no file.
    let port = silentPort()
    let before = Set(downloadTemporaryFiles())
    let loop = try! EventLoop(name: "probe.loop")
    let manager = makeManager(loop: loop)
    let done = DispatchSemaphore(value: 0)
    let outcome = OutcomeBox()
    manager.downloadTask(with: Request(url: URL(string: "http://127.0.0.1:\(port)/file")!), completionHandler: { _, _, error in
        outcome.set(error)
        done.signal()
    }).resume()
    usleep(200_000)
    loop.shutdown()
    guard done.wait(timeout: .now() + 5) == .success else { finish(2, "hang: the download never completed") }
    guard outcome.code == "loopShutDown" else { finish(1, "expected loopShutDown, got \(outcome.code ?? "success")") }
    usleep(200_000)
    let left = Set(downloadTemporaryFiles()).subtracting(before)
    if !left.isEmpty { finish(1, "left behind: \(left.sorted())") }
    finish(0, "ok: loopShutDown, no file left")

case "resume-races-loop-shutdown":
    // A running task, suspended, is resumed after the loop began shutting down but before the
    // loop ended its tasks: it must complete exactly once, and nothing of it may be left.
    let port = silentPort()
    let loop = try! EventLoop(name: "probe.loop")
    let outcome = OutcomeBox()
    weak var weakManager: SessionManager?
    do {
        let manager = makeManager(loop: loop)
        weakManager = manager
        let done = DispatchSemaphore(value: 0)
        let task = manager.dataTask(with: Request(url: URL(string: "http://127.0.0.1:\(port)/")!), completionHandler: { _, _, error in
            outcome.set(error)
            done.signal()
        })
        task.resume()
        usleep(100_000)
        task.suspend()
        // Hold the loop thread, so the shutdown's last job waits behind this one.
        let held = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        loop.execute {
            held.signal()
            release.wait()
        }
        held.wait()
        let stopped = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            loop.shutdown()
            stopped.signal()
        }
        guard eventually(5, { loop.isShutDown }) else { finish(2, "hang: the loop never began shutting down") }
        task.resume()
        release.signal()
        guard stopped.wait(timeout: .now() + 5) == .success else { finish(2, "hang: the loop never stopped") }
        guard done.wait(timeout: .now() + 5) == .success else { finish(2, "hang: the task never completed") }
    }
    // A second completion, if any, shows itself here (OutcomeBox exits with 1).
    usleep(300_000)
    guard outcome.code == "loopShutDown" else { finish(1, "expected loopShutDown, got \(outcome.code ?? "success")") }
    if weakManager != nil { finish(1, "the manager (held by its task) leaked") }
    finish(0, "ok: completed once, nothing left")

case "async-after-loop-shutdown":
    // The async API on a shut-down loop throws instead of hanging.
    let loop = try! EventLoop(name: "probe.loop")
    let manager = makeManager(loop: loop)
    loop.shutdown()
    let done = DispatchSemaphore(value: 0)
    let thrown = OutcomeBox()
    // Detached: top-level code is on the main actor, whose thread waits below.
    Task.detached {
        do {
            _ = try await manager.data(for: Request(url: URL(string: "http://127.0.0.1:9/")!))
            thrown.set(nil)
        } catch {
            thrown.set(error)
        }
        done.signal()
    }
    guard done.wait(timeout: .now() + 5) == .success else { finish(2, "hang: data(for:) never returned") }
    guard thrown.code == "loopShutDown" else { finish(1, "expected loopShutDown, got \(thrown.code ?? "success")") }
    finish(0, "ok: data(for:) threw loopShutDown")

case "submit-after-pool-shutdown":
    // A job submitted to a shut-down pool, and a task on a manager that uses it.
    let pool = WorkerPool(threads: 1, name: "probe.workers")
    pool.shutdown()
    let accepted = pool.submit {}
    if accepted { finish(1, "a shut-down pool accepted a job") }
    let (server, url) = startServer()
    let manager = makeManager(workers: pool)
    let code = fetch(manager, url)
    server.stop()
    guard code == "loopShutDown" else { finish(1, "expected loopShutDown, got \(code ?? "success")") }
    finish(0, "ok: \(code!)")

case "loop-init-low-nofile":
    // With no file descriptor left, a new loop cannot start: it must throw, and the shared
    // loop (first used here) must fail tasks instead of ending the process.
    _ = DispatchQueue(label: "probe.warm").sync { 1 }
    var limit = rlimit()
    getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    let saved = limit
    let open = openFileDescriptorCount()
    // The lowest free descriptor is at most `open`; capping there leaves none.
    var highest: Int32 = 0
    for fd in 0..<Int32(4096) where fcntl(fd, F_GETFD) != -1 { highest = fd }
    limit.rlim_cur = rlim_t(highest + 1)
    guard setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { finish(1, "setrlimit failed (open \(open))") }
    // Fill the holes below the limit too.
    var fillers: [Int32] = []
    while true {
        let fd = Glibc.open("/dev/null", O_RDONLY)
        if fd < 0 { break }
        fillers.append(fd)
    }
    var thrown: String?
    do {
        _ = try EventLoop(name: "probe.loop")
    } catch {
        thrown = "\(error.code)"
    }
    let shared = EventLoop.shared
    var restored = saved
    setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &restored)
    for fd in fillers { close(fd) }
    guard let thrown else { finish(1, "EventLoop(name:) did not throw") }
    let manager = makeManager(loop: shared)
    let code = fetch(manager, "http://127.0.0.1:9/")
    guard code == "loopShutDown" else { finish(1, "shared loop: expected loopShutDown, got \(code ?? "success")") }
    finish(0, "ok: threw \(thrown); tasks on the shared loop: \(code!)")

case "loop-thread-refused":
    // No thread may be made (as root: a process limit of the threads it has, then a user the
    // limit binds): a new loop must throw, not wait forever for a thread that never ran.
    let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? 0
    var limit = rlimit(rlim_cur: rlim_t(threads), rlim_max: rlim_t(threads))
    guard getuid() == 0, threads > 0, setrlimit(__rlimit_resource_t(__RLIMIT_NPROC.rawValue), &limit) == 0,
          setgid(65534) == 0, setuid(65534) == 0 else { finish(77, "needs root to drop to a user the thread limit binds") }
    // On this thread: Dispatch would wait for a thread of its own first (and sleep, retrying).
    // Without the fix this waits forever, and the test's timeout ends the probe.
    var thrown: String?
    do { _ = try EventLoop(name: "probe.nothread") } catch { thrown = "\(error.code): \(error)" }
    guard let thrown, thrown.hasPrefix("loopShutDown"), thrown.contains("uv_thread_create_ex") else { finish(1, "expected loopShutDown naming uv_thread_create_ex, got \(thrown ?? "a loop")") }
    finish(0, "ok: \(thrown)")

case "connect-without-descriptors":
    // No descriptor left and no connection of the session open to close for one: the task
    // fails with connectFailed, saying so, instead of waiting for a close that never comes.
    let manager = makeManager()
    // Warm the shared loop and this manager's engine (a refused connect) before the fill.
    _ = fetch(manager, "http://127.0.0.1:9/")
    expectConnectFailedWithoutDescriptors(manager, "http://127.0.0.2:9/")
case "resolve-without-descriptors":
    // As connect-without-descriptors, for a look-up: c-ares finds no descriptor for its query's
    // socket and nothing of the session is open to close for one.
    let dns: LoopbackDNSServer
    do { dns = try LoopbackDNSServer() } catch { finish(1, "cannot start the DNS server: \(error)") }
    dns.set("warm.test", .init(addresses: ["127.0.0.1"]))
    dns.set("cold.test", .init(addresses: ["127.0.0.1"]))
    var configuration = SessionConfiguration.default
    configuration.dnsServers = ["127.0.0.1:\(dns.port)"]
    let manager = SessionManager(configuration: configuration, loop: .shared, workers: .shared)
    manager.completionQueue = DispatchQueue(label: "probe.completions")
    manager.responseSerializer = AcceptAll()
    // Warm the shared loop, this manager's engine and its resolver's channel (a refused connect
    // after a look-up) before the fill.
    _ = fetch(manager, "http://warm.test:9/")
    expectConnectFailedWithoutDescriptors(manager, "http://cold.test:9/") { dns.stop() }
case "reachability-once":
    // One reading per target, then stop (Tests/EmbedProbe/ReachabilityOnce.swift).
    reachabilityOnce(Array(CommandLine.arguments.dropFirst(2)))
case "reachability-main-queue":
    // The default delivery, on a main queue served by dispatchMain() (Tests/EmbedProbe/ReachabilityOnce.swift).
    reachabilityOnMainQueue()
case "reachability-overrun":
    // A receive buffer overrun by a flood of changes, under unshare -n (Tests/EmbedProbe/ReachabilityOnce.swift).
    reachabilityOverrun()
case "reachability-without-descriptors":
    // No descriptor for the netlink socket (Tests/EmbedProbe/ReachabilityOnce.swift).
    reachabilityWithoutDescriptors()
case "reachability-watch":
    // Reachability managers printing every reading (Tests/EmbedProbe/ReachabilityWatch.swift),
    // run by the tests inside a network namespace that they change.
    reachabilityWatch(Array(CommandLine.arguments.dropFirst(2)))

case "cellular-fetch":
    // Requests refusing cellular, or not, in a client namespace (Tests/EmbedProbe/CellularFetch.swift).
    cellularFetch(Array(CommandLine.arguments.dropFirst(2)))
case "peer-serve":
    // A server that prints who connected (Tests/EmbedProbe/CellularFetch.swift).
    peerServe(Array(CommandLine.arguments.dropFirst(2)))

case "serve":
    // LoopbackHTTPServer on ADDRESS:PORT (an IPv4 literal, e.g. a router namespace's 192.0.2.1)
    // until standard input ends: prints "listening PORT" once it accepts.
    let arguments = Array(CommandLine.arguments.dropFirst(2))
    guard arguments.count == 2, let port = Int(arguments[1]) else { finish(64, "usage: serve ADDRESS PORT") }
    let server = LoopbackHTTPServer(address: arguments[0], port: port)
    do { try server.start() } catch { finish(1, "cannot listen on \(arguments[0]):\(port): \(error)") }
    FileHandle.standardOutput.write(Data("listening \(port)\n".utf8))
    while readLine() != nil {}
    server.stop()
    finish(0, "ok")

default:
    finish(64, "unknown scenario \(scenario)")
}
