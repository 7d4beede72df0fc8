import Testing
@testable import UVNetworking

/// The table's identities follow the kernel's: a replaced route overwrites the old one, routes
/// that only share a prefix and metric (IPv4 aliases, IPv6 per-device routes) stay apart.
@Suite(.tags(.unit)) struct NetworkTableTests {
    typealias R = MonitorReplay
    typealias B = NetlinkBytes
    static let inet = Netlink.Family.inet

    /// RTM_NEWROUTE for 0.0.0.0/0 in main via `gateway` on `interface`, with nlmsg flags `flags`.
    private func defaultRoute(flags: UInt16, gateway: [UInt8], interface: Int32, type: UInt16 = Netlink.MessageType.newRoute) -> [UInt8] {
        let header: [UInt8] = [Self.inet, 0, 0, 0, UInt8(Netlink.Table.main), 3, 0, Netlink.RouteType.unicast] + B.uint32(0)
        let attributes = B.attribute(type: 15, value: B.uint32(Netlink.Table.main)) + B.attribute(type: 5, value: gateway)
            + B.attribute(type: 4, value: B.int32(interface))
        return B.message(type: type, flags: flags, sequence: 0, payload: header + attributes)
    }

    private func ipv4Defaults(_ table: NetworkTable) -> [NetlinkRoute] {
        table.routes.values.filter { $0.family == Self.inet && $0.table == Netlink.Table.main && $0.destinationLength == 0 }
    }

    @Test func aReplacedRouteOverwritesTheOldOne() {
        var replay = R(.general)
        _ = replay.startAndClassify()
        #expect(ipv4Defaults(replay.machine.table).map { $0.nexthops.first?.interfaceIndex } == [3])
        // `ip route replace default via 192.0.2.253 dev veth1`: NLM_F_REPLACE, new nexthop.
        _ = replay.handle(.received(defaultRoute(flags: 0x100, gateway: [192, 0, 2, 253], interface: 2)))
        #expect(ipv4Defaults(replay.machine.table).map { $0.nexthops.first?.interfaceIndex } == [2])
        #expect(replay.machine.pendingDumps.isEmpty)
    }

    @Test func aliasesStayApartAndAnAmbiguousReplaceDumpsRoutes() {
        var replay = R(.general)
        _ = replay.startAndClassify()
        // `ip route append default via 192.0.2.252`: a second alias of the same identity.
        _ = replay.handle(.received(defaultRoute(flags: 0xc00, gateway: [192, 0, 2, 252], interface: 3)))
        #expect(ipv4Defaults(replay.machine.table).count == 2)
        // The kernel replaces its first alias; which one that is only a dump tells.
        _ = replay.handle(.received(defaultRoute(flags: 0x100, gateway: [192, 0, 2, 253], interface: 2)))
        #expect(ipv4Defaults(replay.machine.table).map { $0.nexthops.first?.interfaceIndex } == [2])
        #expect(replay.machine.pendingDumps == [.routes])
    }

    @Test func aDeletionThatMatchesNoKnownRouteDumpsRoutes() {
        var replay = R(.general)
        _ = replay.startAndClassify()
        _ = replay.handle(.received(defaultRoute(flags: 0, gateway: [192, 0, 2, 9], interface: 3, type: Netlink.MessageType.delRoute)))
        #expect(ipv4Defaults(replay.machine.table).count == 1)
        #expect(replay.machine.pendingDumps == [.routes])
    }
}
