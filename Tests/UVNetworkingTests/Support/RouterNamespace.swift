import Foundation
import Glibc
import Synchronization

/// Two network namespaces of a test's own, made with `ip netns`: a client and its router, joined
/// by a veth pair (`uvr0` on both sides). The client has 192.0.2.2/24 and 2001:db8::2/64, the
/// router 192.0.2.1/24 and 2001:db8::1/64 (TEST-NET addresses, no duplicate address detection),
/// lo is up in both, and the client's default routes (IPv4 and IPv6) go via the router. Nothing
/// here touches the machine's own network; traffic stays between the two namespaces.
///
/// Processes run inside with `ip netns exec`, which also mounts a sysfs of the namespace (so
/// `/sys/class/net` shows its interfaces) and binds `/etc/netns/<name>/hosts` over `/etc/hosts`.
///
/// What the kernel does on each change, as `ip monitor` shows it (the tests rely on this):
/// - client link down: RTM_NEWLINK without IFF_UP; IPv6 routes are deleted with RTM_DELROUTE
///   (the default route too), IPv4 routes of the link are flushed *without* any message; the
///   addresses stay (IPv4 always, IPv6 because the client sets `keep_addr_on_down`).
/// - client link up: RTM_NEWLINK (first without carrier, then with it), the connected routes
///   (RTM_NEWROUTE) come back, the default routes do not: the test re-adds them, as a DHCP
///   client or a router advertisement would (`setClientLink(up:)` does).
/// - router side down (carrier loss): RTM_NEWLINK with IFF_UP but without IFF_RUNNING /
///   IFF_LOWER_UP; routes stay (marked linkdown), no route message.
/// - address removed: RTM_DELADDR, and RTM_DELROUTE for its connected route; the IPv4 default
///   route via that subnet is flushed without a message; the IPv6 default route stays.
final class RouterNamespace: @unchecked Sendable {
    // @unchecked: `tornDown` is atomic; everything else is immutable.

    /// The two sides.
    enum Side { case client, router }

    static let interface = "uvr0"
    static let clientIPv4 = "192.0.2.2"
    static let routerIPv4 = "192.0.2.1"
    static let clientIPv6 = "2001:db8::2"
    static let routerIPv6 = "2001:db8::1"

    /// The namespaces' names: `uvr-client-<pid>-<n>`, `uvr-router-<pid>-<n>`. The pid lets a later
    /// run sweep what a crashed one left behind without touching a live run's.
    let client: String
    let router: String
    private let tornDown = Atomic(false)
    private static let counter = Atomic(0)

    /// `ip`, where Debian puts it.
    static let ip: String? = ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Why namespaces cannot be made here (not root, no `ip`, no CAP_SYS_ADMIN), or nil when they can.
    static let unavailableReason: String? = {
        guard geteuid() == 0 else { return "needs root for network namespaces" }
        guard ip != nil else { return "needs ip (iproute2)" }
        let name = "uvr-probe-\(getpid())"
        guard (try? run([ip!, "netns", "add", name])) != nil else { return "ip netns add failed (no CAP_SYS_ADMIN?)" }
        _ = try? run([ip!, "netns", "delete", name])
        sweepStale()
        return nil
    }()

    static var isAvailable: Bool { unavailableReason == nil }

    /// Makes both namespaces, wired and routed; `hosts` becomes the client's /etc/hosts (for
    /// processes started with `execArguments`). Removes whatever it made when a step fails.
    init(hosts: String = "127.0.0.1 localhost\n::1 localhost\n") throws {
        guard let ip = Self.ip, Self.isAvailable else { throw RouterNamespaceError(Self.unavailableReason ?? "unavailable") }
        let id = "\(getpid())-\(Self.counter.add(1, ordering: .relaxed).newValue)"
        client = "uvr-client-\(id)"
        router = "uvr-router-\(id)"
        do {
            try Self.run([ip, "netns", "add", client])
            try Self.run([ip, "netns", "add", router])
            // Made from inside the client, the veth's names are the namespaces' own: no clash
            // with the machine's interfaces or another run's.
            try Self.run([ip, "-n", client, "link", "add", Self.interface, "type", "veth", "peer", "name", Self.interface, "netns", router])
            // Keep the IPv6 address on a downed link, as IPv4 does, so link up restores it.
            try Self.run([ip, "netns", "exec", client, "/bin/sh", "-c",
                          "echo 1 > /proc/sys/net/ipv6/conf/\(Self.interface)/keep_addr_on_down"])
            try batch(.client, ["link set lo up", "addr add \(Self.clientIPv4)/24 dev \(Self.interface)",
                                "addr add \(Self.clientIPv6)/64 dev \(Self.interface) nodad", "link set \(Self.interface) up"])
            try batch(.router, ["link set lo up", "addr add \(Self.routerIPv4)/24 dev \(Self.interface)",
                                "addr add \(Self.routerIPv6)/64 dev \(Self.interface) nodad", "link set \(Self.interface) up"])
            try addDefaultRoutes()
            let etc = "/etc/netns/\(client)"
            try FileManager.default.createDirectory(atPath: etc, withIntermediateDirectories: true)
            try hosts.write(toFile: etc + "/hosts", atomically: true, encoding: .utf8)
            // No DNS server in there: a name not in hosts fails at once, nothing leaves.
            try "nameserver 127.0.0.1\noptions timeout:1 attempts:1\n".write(toFile: etc + "/resolv.conf", atomically: true, encoding: .utf8)
        } catch {
            tearDown()
            throw error
        }
    }

    deinit { tearDown() }

    /// Removes both namespaces (the veth goes with them) and the client's /etc/netns folder.
    /// Idempotent. A process still running inside keeps its namespace alive, nameless, until it exits.
    func tearDown() {
        guard !tornDown.exchange(true, ordering: .acquiringAndReleasing), let ip = Self.ip else { return }
        for name in [client, router] { Self.remove(name, ip: ip) }
    }

    /// Removes the `uvr-` namespaces whose creating process is gone (a run that crashed).
    static func sweepStale() {
        guard let ip, let names = try? FileManager.default.contentsOfDirectory(atPath: "/run/netns") else { return }
        for name in names where name.hasPrefix("uvr-") {
            let parts = name.split(separator: "-")
            guard parts.count >= 3, let pid = pid_t(parts[2]) else { continue }
            if kill(pid, 0) == -1 && errno == ESRCH { remove(name, ip: ip) }
        }
    }

    private static func remove(_ name: String, ip: String) {
        _ = try? run([ip, "netns", "delete", name])
        try? FileManager.default.removeItem(atPath: "/etc/netns/\(name)")
    }

    func name(_ side: Side) -> String { side == .client ? client : router }

    /// Runs `ip -n <side> -batch -` with `commands`, one per line (family from the addresses:
    /// batch mode takes no `-6`).
    func batch(_ side: Side, _ commands: [String]) throws {
        try Self.run([Self.ip!, "-n", name(side), "-batch", "-"], input: commands.joined(separator: "\n") + "\n")
    }

    /// Runs `ip -n <side> arguments...` and returns its output.
    @discardableResult
    func ip(_ side: Side, _ arguments: String...) throws -> String {
        try Self.run([Self.ip!, "-n", name(side)] + arguments)
    }

    /// The argv that runs `command` inside `side` (for a long-running process the test starts).
    func execArguments(_ side: Side, _ command: [String]) -> [String] {
        [Self.ip!, "netns", "exec", name(side)] + command
    }

    /// Runs `command` inside `side` to its end; its output (standard output and error).
    @discardableResult
    func run(in side: Side, _ command: [String]) throws -> String {
        try Self.run(execArguments(side, command))
    }

    // MARK: Changes the tests make

    /// The client's link down, or up again with its default routes re-added (the kernel drops
    /// them with the link; a DHCP client or a router advertisement would bring them back).
    func setClientLink(up: Bool) throws {
        try batch(.client, up ? ["link set \(Self.interface) up"] + defaultRouteCommands("replace")
                              : ["link set \(Self.interface) down"])
    }

    /// The router's side of the veth down or up: the client's link stays up and loses carrier.
    func setRouterLink(up: Bool) throws {
        try batch(.router, ["link set \(Self.interface) \(up ? "up" : "down")"])
    }

    /// The client's link down and up again at once, default routes re-added: a flap.
    func flapClientLink() throws {
        try batch(.client, ["link set \(Self.interface) down", "link set \(Self.interface) up"] + defaultRouteCommands("replace"))
    }

    /// The client's default routes, IPv4 and IPv6, via the router (replacing any).
    func addDefaultRoutes() throws { try batch(.client, defaultRouteCommands("replace")) }

    func deleteDefaultRoutes() throws { try batch(.client, defaultRouteCommands("del")) }

    func deleteIPv6DefaultRoute() throws { try batch(.client, ["route del default via \(Self.routerIPv6)"]) }

    /// The client's addresses removed (their connected routes, and the IPv4 default route with them).
    func removeClientAddresses() throws {
        try batch(.client, ["addr del \(Self.clientIPv4)/24 dev \(Self.interface)", "addr del \(Self.clientIPv6)/64 dev \(Self.interface)"])
    }

    /// The client's addresses back, and its IPv4 default route.
    func restoreClientAddresses(ipv6DefaultRoute: Bool = true) throws {
        try batch(.client, ["addr add \(Self.clientIPv4)/24 dev \(Self.interface)", "addr add \(Self.clientIPv6)/64 dev \(Self.interface) nodad",
                            "route replace default via \(Self.routerIPv4)"]
                           + (ipv6DefaultRoute ? ["route replace default via \(Self.routerIPv6)"] : []))
    }

    private func defaultRouteCommands(_ verb: String) -> [String] {
        ["route \(verb) default via \(Self.routerIPv4)", "route \(verb) default via \(Self.routerIPv6)"]
    }

    /// Waits until the client's link reports operational state `state` ("UP", "DOWN") and
    /// returns the earliest moment it can have changed (the start of the last poll that still saw
    /// the old state), on `monotonicMilliseconds()`'s clock; nil after `timeout` seconds. The
    /// kernel publishes carrier changes (RTM_NEWLINK) from its link-watch work, which it runs
    /// at most about once a second: a carrier change can reach netlink up to a second after the
    /// command that caused it, and "within a second" is the library's part, counted from there.
    func clientOperstateChanged(to state: String, timeout: Double = 10) -> Int64? {
        let deadline = monotonicMilliseconds() + Int64(timeout * 1000)
        var lastOld = monotonicMilliseconds()
        while monotonicMilliseconds() < deadline {
            let pollStart = monotonicMilliseconds()
            if let line = try? ip(.client, "-o", "link", "show", Self.interface), line.contains(" state \(state) ") { return lastOld }
            lastOld = pollStart
        }
        return nil
    }

    // MARK: Running commands

    /// Runs argv to its end; throws with its output when it fails.
    @discardableResult
    static func run(_ arguments: [String], input: String? = nil) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        let output = Pipe(), stdin = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = input == nil ? FileHandle.nullDevice : stdin
        try process.run()
        if let input {
            stdin.fileHandleForWriting.write(Data(input.utf8))
            try? stdin.fileHandleForWriting.close()
        }
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            throw RouterNamespaceError("\(arguments.joined(separator: " ")) failed (\(process.terminationStatus)): \(text)")
        }
        return text
    }
}

struct RouterNamespaceError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// CLOCK_MONOTONIC in milliseconds: one clock for the test and the processes it starts.
func monotonicMilliseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
}
