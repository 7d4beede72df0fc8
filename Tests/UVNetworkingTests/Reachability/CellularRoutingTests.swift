import Testing
@testable import UVNetworking

/// How a connection that refuses cellular reaches an address, decided on hand-made tables: the
/// kernel's route kept (and pinned) when it is not cellular, replaced by the best route over
/// another interface when it is, denied when only cellular interfaces reach it.
@Suite(.tags(.unit)) struct CellularRoutingTests {
    static let inet = Netlink.Family.inet
    static let inet6 = Netlink.Family.inet6
    static let up = Netlink.InterfaceFlag.up | Netlink.InterfaceFlag.running | Netlink.InterfaceFlag.lowerUp

    /// lo (1); wwan0 (2, cellular) with 10.64.0.2/24 and 2001:db8:1::2/64; eth0 (3) with
    /// 192.0.2.2/24 and 2001:db8:2::2/64; wwan1 (4, cellular) with 10.65.0.2/24.
    static func table(routes: [NetlinkRoute], eth0Flags: UInt32 = up) -> NetworkTable {
        var table = NetworkTable()
        table.insert(NetlinkLink(index: 1, type: 772, flags: up | Netlink.InterfaceFlag.loopback, name: "lo"))
        table.insert(NetlinkLink(index: 2, type: 1, flags: up, name: "wwan0"))
        table.insert(NetlinkLink(index: 3, type: 1, flags: eth0Flags, name: "eth0"))
        table.insert(NetlinkLink(index: 4, type: 1, flags: up, name: "wwan1"))
        table.insert(NetlinkAddress(family: inet, prefixLength: 8, flags: 0x80, index: 1, address: [127, 0, 0, 1]))
        table.insert(NetlinkAddress(family: inet, prefixLength: 24, flags: 0x80, index: 2, address: [10, 64, 0, 2]))
        table.insert(NetlinkAddress(family: inet6, prefixLength: 64, flags: 0x80, index: 2, address: [0x20, 0x01, 0x0d, 0xb8, 0, 1] + Array(repeating: 0, count: 9) + [2]))
        table.insert(NetlinkAddress(family: inet, prefixLength: 24, flags: 0x80, index: 3, address: [192, 0, 2, 2]))
        table.insert(NetlinkAddress(family: inet6, prefixLength: 64, flags: 0x80, index: 3, address: [0x20, 0x01, 0x0d, 0xb8, 0, 2] + Array(repeating: 0, count: 9) + [2]))
        table.insert(NetlinkAddress(family: inet, prefixLength: 24, flags: 0x80, index: 4, address: [10, 65, 0, 2]))
        routes.forEach { table.insert($0) }
        return table
    }

    static func route(_ destination: [UInt8] = [], _ length: UInt8 = 0, family: UInt8 = inet, table: UInt32 = Netlink.Table.main,
                      type: UInt8 = Netlink.RouteType.unicast, priority: UInt32 = 0, via interfaces: [Int32]) -> NetlinkRoute {
        NetlinkRoute(family: family, destinationLength: length, destination: destination, table: table, type: type, priority: priority,
                     nexthops: interfaces.map { NetlinkNexthop(interfaceIndex: $0, gateway: nil, flags: 0) })
    }

    static func kind(_ name: String) -> NetworkInterfaceKind {
        name.hasPrefix("wwan") ? .cellular : name == "lo" ? .other : .ethernet
    }

    private let server = IPAddressBytes(family: Netlink.Family.inet, bytes: [203, 0, 113, 9])

    private func decide(_ routes: [NetlinkRoute], for address: IPAddressBytes? = nil, eth0Flags: UInt32 = up) -> CellularRouting.Decision {
        CellularRouting.decide(for: address ?? server, in: Self.table(routes: routes, eth0Flags: eth0Flags), kind: Self.kind)
    }

    @Test func aRouteThatIsNotCellularIsKeptAndPinned() {
        #expect(decide([Self.route(priority: 100, via: [3]), Self.route(priority: 200, via: [2])]) == .pin(interface: "eth0"))
    }

    @Test func aCellularRouteGivesWayToTheBestOtherOne() {
        // The cellular default is preferred (lower metric); the Ethernet one is the way round it.
        #expect(decide([Self.route(priority: 100, via: [2]), Self.route(priority: 200, via: [3])]) == .reroute(interface: "eth0"))
        // A more specific route over cellular still loses to a wider one over Ethernet.
        #expect(decide([Self.route([203, 0, 113, 0], 24, via: [2]), Self.route(priority: 500, via: [3])]) == .reroute(interface: "eth0"))
        // A multipath route over both: its Ethernet nexthop.
        #expect(decide([Self.route(via: [2, 3])]) == .reroute(interface: "eth0"))
    }

    @Test func onlyCellularRoutesDeny() {
        let decision = decide([Self.route(priority: 100, via: [2]), Self.route(priority: 200, via: [4])])
        // Another cellular interface is no way round: both are named.
        #expect(decision == .denied(reason: "only cellular interfaces (wwan0, wwan1) have a route to it"))
        // An Ethernet route over a link that is down does not count.
        #expect(decide([Self.route(priority: 100, via: [2]), Self.route(priority: 200, via: [3])], eth0Flags: Netlink.InterfaceFlag.up)
            == .denied(reason: "only cellular interfaces (wwan0, wwan1) have a route to it"))
        // A route over Ethernet to another network is no way to this one.
        #expect(decide([Self.route(via: [2]), Self.route([198, 51, 100, 0], 24, via: [3])])
            == .denied(reason: "only cellular interfaces (wwan0, wwan1) have a route to it"))
    }

    @Test func localAndUnroutedAddressesConnectAsUsual() {
        let local = Self.route([10, 64, 0, 2], 32, table: Netlink.Table.local, type: Netlink.RouteType.local, via: [2])
        // A cellular interface's own address is delivered over loopback: nothing goes out.
        #expect(decide([local, Self.route(via: [2])], for: IPAddressBytes(family: Self.inet, bytes: [10, 64, 0, 2])) == .unbound)
        // No route at all: the connect fails as it would without the rule.
        #expect(decide([]) == .unbound)
    }

    @Test func ipv6IsDecidedTheSameWay() {
        let address = IPAddressBytes(family: Self.inet6, bytes: [0x20, 0x01, 0x0d, 0xb8, 0, 9] + Array(repeating: 0, count: 9) + [1])
        #expect(decide([Self.route(family: Self.inet6, priority: 100, via: [2]), Self.route(family: Self.inet6, priority: 200, via: [3])],
                       for: address) == .reroute(interface: "eth0"))
        // wwan1 has no IPv6 address: it is no way out, and Ethernet is the only other.
        #expect(decide([Self.route(family: Self.inet6, via: [2])], for: address) == .denied(reason: "only cellular interfaces (wwan0, wwan1) have a route to it"))
    }

    @Test func onlyInterfacesThatMatterAreClassified() {
        var asked: [String] = []
        let table = Self.table(routes: [Self.route(via: [3])])
        _ = CellularRouting.decide(for: server, in: table) { asked.append($0); return Self.kind($0) }
        #expect(asked == ["eth0"])
    }
}
