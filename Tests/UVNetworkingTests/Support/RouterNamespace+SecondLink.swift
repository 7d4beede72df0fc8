import Foundation

/// A second way from the client to the router, for the cellular routing tests: a veth `uvr1`
/// (client 203.0.113.2/24, router 203.0.113.1/24) beside `uvr0`, and a server address of the
/// router's own, 198.51.100.1 on its loopback, that both reach. The client's default route via
/// uvr0 (metric 0) stays preferred; the one via uvr1 has metric 200. The server tells the two
/// apart by the client's source address: 192.0.2.2 came by uvr0, 203.0.113.2 by uvr1.
extension RouterNamespace {
    static let secondInterface = "uvr1"
    static let secondClientIPv4 = "203.0.113.2"
    static let secondRouterIPv4 = "203.0.113.1"
    static let serverIPv4 = "198.51.100.1"

    /// Adds uvr1, its addresses and default route, and the server address. Reverse-path
    /// filtering is turned off in the client: an answer from the server may come back by the
    /// link the lower-metric route does not name.
    func addSecondLink() throws {
        let ip = Self.ip!
        try Self.run([ip, "-n", client, "link", "add", Self.secondInterface, "type", "veth", "peer", "name", Self.secondInterface, "netns", router])
        try run(in: .client, ["/bin/sh", "-c", "for f in all default \(Self.interface) \(Self.secondInterface); do echo 0 > /proc/sys/net/ipv4/conf/$f/rp_filter; done"])
        try batch(.client, ["addr add \(Self.secondClientIPv4)/24 dev \(Self.secondInterface)", "link set \(Self.secondInterface) up",
                            "route add default via \(Self.secondRouterIPv4) dev \(Self.secondInterface) metric 200"])
        try batch(.router, ["addr add \(Self.secondRouterIPv4)/24 dev \(Self.secondInterface)", "link set \(Self.secondInterface) up",
                            "addr add \(Self.serverIPv4)/32 dev lo"])
    }

    /// The client's default route via uvr1 removed: only the cellular one is left.
    func deleteSecondDefaultRoute() throws {
        try batch(.client, ["route del default via \(Self.secondRouterIPv4) dev \(Self.secondInterface)"])
    }

    /// A sysfs-like tree (`InterfaceClassifier`'s root) in a new temporary directory: uvr0
    /// cellular (DEVTYPE=wwan) when `uvr0Cellular`, else Ethernet; uvr1 Ethernet; lo loopback.
    static func interfaceTree(uvr0Cellular: Bool = true) throws -> String {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("uvr-sysfs-\(UUID().uuidString)").path
        let entries: [(String, String, String)] = [
            (interface, "1", uvr0Cellular ? "DEVTYPE=wwan\nINTERFACE=\(interface)\n" : "INTERFACE=\(interface)\n"),
            (secondInterface, "1", "INTERFACE=\(secondInterface)\n"),
            ("lo", "772", "INTERFACE=lo\n"),
        ]
        for (name, type, uevent) in entries {
            let directory = root + "/" + name
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try (type + "\n").write(toFile: directory + "/type", atomically: true, encoding: .utf8)
            try uevent.write(toFile: directory + "/uevent", atomically: true, encoding: .utf8)
        }
        return root
    }
}
