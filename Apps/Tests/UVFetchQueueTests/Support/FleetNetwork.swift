import Foundation
import Glibc
import Synchronization

/// The machines of a fleet test, each a network namespace of the test's own: a database host, a
/// web host and `workers` worker hosts, every one joined by a veth pair to a bridge in a hub
/// namespace (the switch of a rack). Addresses are TEST-NET-1 (192.0.2.0/24, RFC 5737): the
/// database 192.0.2.10, the web server 192.0.2.20, worker n 192.0.2.(100+n). Nothing is routed
/// beyond the bridge, and the machine's own network is never touched: traffic stays between
/// these namespaces.
///
/// Processes run inside with `ip netns exec`, which execs them in place (the pid is the
/// process's own, so a SIGKILL reaches the worker itself).
final class FleetNetwork: @unchecked Sendable {
    // @unchecked: `tornDown` is atomic; everything else is immutable.

    /// One host of the fleet.
    enum Host: Hashable, CustomStringConvertible {
        case database, web
        /// Worker 1, 2, ...
        case worker(Int)

        var description: String {
            switch self {
            case .database: "db"
            case .web: "web"
            case .worker(let n): "w\(n)"
            }
        }
    }

    static let databaseAddress = "192.0.2.10"
    static let webAddress = "192.0.2.20"
    static func workerAddress(_ n: Int) -> String { "192.0.2.\(100 + n)" }

    /// The namespaces' names: `uvq-<host>-<pid>-<n>`; the pid lets a later run sweep what a
    /// crashed one left behind without touching a live run's.
    private let prefix: String
    let workers: Int
    private let tornDown = Atomic(false)
    private static let counter = Atomic(0)

    /// `ip`, where Debian puts it.
    static let ip: String? = ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Why the namespaces cannot be made here (not root, no `ip`), or nil when they can.
    static let unavailableReason: String? = {
        guard geteuid() == 0 else { return "needs root for network namespaces" }
        guard let ip else { return "needs ip (iproute2)" }
        let name = "uvq-probe-\(getpid())"
        guard (try? run([ip, "netns", "add", name])) != nil else { return "ip netns add failed (no CAP_SYS_ADMIN?)" }
        _ = try? run([ip, "netns", "delete", name])
        sweepStale()
        return nil
    }()

    /// Makes the hub, the database and web hosts and `workers` worker hosts, wired and
    /// addressed. Removes whatever it made when a step fails.
    init(workers: Int) throws {
        guard let ip = Self.ip, Self.unavailableReason == nil else { throw FleetNetworkError(Self.unavailableReason ?? "unavailable") }
        self.workers = workers
        prefix = "uvq-%@-\(getpid())-\(Self.counter.add(1, ordering: .relaxed).newValue)"
        do {
            try Self.run([ip, "netns", "add", hubName])
            try Self.run([ip, "-n", hubName, "-batch", "-"], input: "link set lo up\nlink add br0 type bridge\nlink set br0 up\n")
            for host in hosts {
                let name = self.name(host)
                try Self.run([ip, "netns", "add", name])
                // Made from inside the host, the veth's names are the namespaces' own: no clash
                // with the machine's interfaces or another run's.
                try Self.run([ip, "-n", name, "link", "add", "eth0", "type", "veth", "peer", "name", "p-\(host)", "netns", hubName])
                try Self.run([ip, "-n", hubName, "-batch", "-"], input: "link set p-\(host) master br0\nlink set p-\(host) up\n")
                try Self.run([ip, "-n", name, "-batch", "-"],
                             input: "link set lo up\naddr add \(address(host))/24 dev eth0\nlink set eth0 up\n")
            }
        } catch {
            tearDown()
            throw error
        }
    }

    deinit { tearDown() }

    /// Every host but the hub.
    var hosts: [Host] { [.database, .web] + (0..<workers).map { .worker($0 + 1) } }

    func address(_ host: Host) -> String {
        switch host {
        case .database: Self.databaseAddress
        case .web: Self.webAddress
        case .worker(let n): Self.workerAddress(n)
        }
    }

    private var hubName: String { String(format: prefix, "hub") }

    /// The namespace of `host`.
    func name(_ host: Host) -> String { String(format: prefix, host.description) }

    /// The argv that runs `command` inside `host`.
    func execArguments(_ host: Host, _ command: [String]) -> [String] {
        [Self.ip!, "netns", "exec", name(host)] + command
    }

    /// Runs `command` inside `host` to its end; its output (standard output and error, or only
    /// standard output).
    @discardableResult
    func run(in host: Host, _ command: [String], stdoutOnly: Bool = false) throws -> String {
        try Self.run(execArguments(host, command), stdoutOnly: stdoutOnly)
    }

    /// Removes every namespace (the veths and the bridge go with them). Idempotent. A process
    /// still running inside keeps its namespace alive, nameless, until it exits.
    func tearDown() {
        guard !tornDown.exchange(true, ordering: .acquiringAndReleasing), let ip = Self.ip else { return }
        for name in hosts.map(name) + [hubName] { _ = try? Self.run([ip, "netns", "delete", name]) }
    }

    /// Removes the `uvq-` namespaces whose creating process is gone (a run that crashed).
    static func sweepStale() {
        guard let ip, let names = try? FileManager.default.contentsOfDirectory(atPath: "/run/netns") else { return }
        for name in names where name.hasPrefix("uvq-") {
            let parts = name.split(separator: "-")
            guard parts.count >= 3, let pid = pid_t(parts[2]) else { continue }
            if kill(pid, 0) == -1 && errno == ESRCH { _ = try? run([ip, "netns", "delete", name]) }
        }
    }

    /// Runs argv to its end; throws with its output when it fails.
    @discardableResult
    static func run(_ arguments: [String], input: String? = nil, stdoutOnly: Bool = false) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        let output = Pipe(), stdin = Pipe()
        process.standardOutput = output
        // Only the output is wanted (JSON Lines, say): the summary on standard error is dropped.
        process.standardError = stdoutOnly ? FileHandle.nullDevice : output
        process.standardInput = input == nil ? FileHandle.nullDevice : stdin
        try process.run()
        if let input {
            stdin.fileHandleForWriting.write(Data(input.utf8))
            try? stdin.fileHandleForWriting.close()
        }
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            throw FleetNetworkError("\(arguments.joined(separator: " ")) failed (\(process.terminationStatus)): \(text)")
        }
        return text
    }
}

struct FleetNetworkError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
