import Testing
@testable import UVNetworking

/// Route lookup on hand-made tables: the kernel's default rules, prefixes, metrics, route
/// types, nexthops, and what makes an interface usable.
@Suite(.tags(.unit)) struct RouteLookupTests {
    static let inet = Netlink.Family.inet
    static let up = Netlink.InterfaceFlag.up | Netlink.InterfaceFlag.running | Netlink.InterfaceFlag.lowerUp

    /// lo (1), eth0 (2) with 192.0.2.1/24, eth1 (3) with 198.51.100.1/24.
    private func table(routes: [NetlinkRoute], eth0Flags: UInt32 = up, eth0AddressFlags: UInt32 = 0x80) -> NetworkTable {
        var table = NetworkTable()
        table.insert(NetlinkLink(index: 1, type: 772, flags: Self.up | Netlink.InterfaceFlag.loopback, name: "lo"))
        table.insert(NetlinkLink(index: 2, type: 1, flags: eth0Flags, name: "eth0"))
        table.insert(NetlinkLink(index: 3, type: 1, flags: Self.up, name: "eth1"))
        table.insert(NetlinkAddress(family: Self.inet, prefixLength: 8, flags: 0x80, index: 1, address: [127, 0, 0, 1]))
        table.insert(NetlinkAddress(family: Self.inet, prefixLength: 24, flags: eth0AddressFlags, index: 2, address: [192, 0, 2, 1]))
        table.insert(NetlinkAddress(family: Self.inet, prefixLength: 24, flags: 0x80, index: 3, address: [198, 51, 100, 1]))
        routes.forEach { table.insert($0) }
        return table
    }

    private func route(_ destination: [UInt8], _ length: UInt8, table: UInt32 = Netlink.Table.main, type: UInt8 = Netlink.RouteType.unicast,
                       priority: UInt32 = 0, via interfaces: [Int32] = [2], flags: UInt32 = 0) -> NetlinkRoute {
        NetlinkRoute(family: Self.inet, destinationLength: length, destination: destination, table: table, type: type, priority: priority,
                     nexthops: interfaces.map { NetlinkNexthop(interfaceIndex: $0, gateway: nil, flags: flags) })
    }

    private func verdict(_ address: [UInt8], _ routes: [NetlinkRoute], eth0Flags: UInt32 = up, eth0AddressFlags: UInt32 = 0x80) -> RouteVerdict {
        RouteLookup.verdict(for: IPAddressBytes(family: Self.inet, bytes: address),
                            in: table(routes: routes, eth0Flags: eth0Flags, eth0AddressFlags: eth0AddressFlags))
    }

    private let target: [UInt8] = [203, 0, 113, 9]
    private var defaultRoute: NetlinkRoute { route([], 0) }

    @Test func longestPrefixWinsThenLowestMetric() {
        #expect(verdict(target, [defaultRoute, route([203, 0, 113, 0], 24, via: [3])]) == .reachable(interfaceIndex: 3))
        #expect(verdict(target, [route([], 0, priority: 100, via: [3]), route([], 0, priority: 50)]) == .reachable(interfaceIndex: 2))
        #expect(verdict(target, [route([203, 0, 113, 128], 25, via: [3])]) == .notReachable)  // .9 is in the other half
    }

    @Test func dropRoutesEndTheLookupAndThrowFallsThrough() {
        for type in [Netlink.RouteType.blackhole, Netlink.RouteType.unreachable, Netlink.RouteType.prohibit] {
            #expect(verdict(target, [defaultRoute, route([203, 0, 113, 0], 24, type: type, via: [])]) == .notReachable)
        }
        // A throw in the local table sends the lookup on to main.
        #expect(verdict(target, [defaultRoute, route([203, 0, 113, 0], 24, table: Netlink.Table.local, type: Netlink.RouteType.throw, via: [])])
            == .reachable(interfaceIndex: 2))
        // A throw in main leaves main, shorter prefixes and all, for the default table.
        #expect(verdict(target, [route([203, 0, 113, 0], 24, type: Netlink.RouteType.throw, via: []),
                                 route([], 0, table: Netlink.Table.default, via: [3])]) == .reachable(interfaceIndex: 3))
        #expect(verdict(target, [route([203, 0, 113, 0], 24, type: Netlink.RouteType.throw, via: []), defaultRoute]) == .notReachable)
    }

    @Test func tablesAreAskedLocalMainDefaultAndNoOther() {
        #expect(verdict(target, [route([], 0, table: Netlink.Table.default, via: [3]), route([], 0, via: [2])]) == .reachable(interfaceIndex: 2))
        #expect(verdict(target, [route([], 0, table: 1000, via: [3])]) == .notReachable)
        #expect(verdict(target, [route(target, 32, table: Netlink.Table.local, type: Netlink.RouteType.local, via: [2]), defaultRoute])
            == .reachable(interfaceIndex: 1))  // local addresses are delivered over loopback
    }

    /// An IPv4 route with a TOS matches only packets of that TOS; a client's carry none.
    @Test func routesForAnotherTOSAreNotTaken() {
        var tosRoute = route([203, 0, 113, 0], 24, via: [3])
        tosRoute.tos = 0x10
        #expect(verdict(target, [tosRoute, defaultRoute]) == .reachable(interfaceIndex: 2))
        #expect(verdict(target, [tosRoute]) == .notReachable)
        var tosDefault = route([], 0, via: [3])
        tosDefault.tos = 0x10
        #expect(RouteLookup.defaultRouteVerdict(in: table(routes: [tosDefault])) == .notReachable)
    }

    @Test func deadNexthopsArePassedOverForAShorterPrefix() {
        let specific = route([203, 0, 113, 0], 24, via: [2], flags: Netlink.NexthopFlag.linkDown)
        #expect(verdict(target, [specific, route([], 0, via: [3])]) == .reachable(interfaceIndex: 3))
        let dead = route([203, 0, 113, 0], 24, via: [2], flags: Netlink.NexthopFlag.dead)
        #expect(verdict(target, [dead]) == .notReachable)
    }

    @Test func multipathNeedsOneUsableNexthop() {
        var multipath = route([], 0, via: [2, 3])
        #expect(verdict(target, [multipath], eth0Flags: 0) == .reachable(interfaceIndex: 3))
        multipath.nexthops[1].flags = Netlink.NexthopFlag.dead
        #expect(verdict(target, [multipath], eth0Flags: 0) == .notReachable)
        #expect(verdict(target, [multipath]) == .reachable(interfaceIndex: 2))
    }

    @Test func anInterfaceNeedsUpCarrierAndAUsableAddress() {
        #expect(verdict(target, [defaultRoute]) == .reachable(interfaceIndex: 2))
        #expect(verdict(target, [defaultRoute], eth0Flags: Self.up & ~Netlink.InterfaceFlag.up) == .notReachable)
        #expect(verdict(target, [defaultRoute], eth0Flags: Self.up & ~Netlink.InterfaceFlag.lowerUp) == .notReachable)
        #expect(verdict(target, [defaultRoute], eth0AddressFlags: 0x80 | Netlink.AddressFlag.tentative) == .notReachable)
        #expect(verdict(target, [defaultRoute], eth0AddressFlags: 0x80 | Netlink.AddressFlag.dadFailed) == .notReachable)
        // Optimistic DAD (RFC 4429): tentative, yet the kernel already picks it as a source.
        #expect(verdict(target, [defaultRoute], eth0AddressFlags: 0x80 | Netlink.AddressFlag.tentative | Netlink.AddressFlag.optimistic)
            == .reachable(interfaceIndex: 2))
        #expect(verdict(target, [defaultRoute], eth0AddressFlags: 0x80 | Netlink.AddressFlag.dadFailed | Netlink.AddressFlag.optimistic)
            == .notReachable)
        // An IPv6 target needs an IPv6 address on the way out.
        var v6 = route([], 0)
        v6.family = Netlink.Family.inet6
        let v6Target = IPAddressBytes(family: Netlink.Family.inet6, bytes: [0x20, 0x01, 0x0d, 0xb8] + Array(repeating: 0, count: 11) + [9])
        #expect(RouteLookup.verdict(for: v6Target, in: table(routes: [v6])) == .notReachable)
    }

    @Test func theGeneralVerdictWantsAMainDefaultRouteOfEitherFamily() {
        let general = { (routes: [NetlinkRoute]) in RouteLookup.defaultRouteVerdict(in: self.table(routes: routes)) }
        #expect(general([defaultRoute]) == .reachable(interfaceIndex: 2))
        #expect(general([route([], 0, table: 1000)]) == .notReachable)
        #expect(general([route([0, 0, 0, 0], 1)]) == .notReachable)  // half the Internet is not a default route
        #expect(general([route([], 0, type: Netlink.RouteType.blackhole, via: [])]) == .notReachable)
        #expect(general([route([], 0, flags: Netlink.NexthopFlag.linkDown)]) == .notReachable)
    }

    @Test func prefixesMatchBitByBit() {
        let address = IPAddressBytes(family: Self.inet, bytes: [192, 0, 2, 130])
        #expect(address.hasPrefix([192, 0, 2, 128], length: 25))
        #expect(!address.hasPrefix([192, 0, 2, 0], length: 25))
        #expect(address.hasPrefix([], length: 0))
        #expect(address.hasPrefix([192, 0, 3, 0], length: 23))
        #expect(!address.hasPrefix([192, 0, 2], length: 32))  // a short prefix never matches
    }
}

/// A link-local source reaches only its link: an interface whose only address of the family is
/// link-local serves link-local destinations, not global ones.
@Suite(.tags(.unit)) struct RouteLookupLinkLocalTests {
    static let up = Netlink.InterfaceFlag.up | Netlink.InterfaceFlag.running | Netlink.InterfaceFlag.lowerUp

    /// eth0 (2) holding only `address`, a default route via it and the link-local prefix on it.
    private func table(family: UInt8, address: [UInt8], linkLocalPrefix: [UInt8], prefixLength: UInt8) -> NetworkTable {
        var table = NetworkTable()
        table.insert(NetlinkLink(index: 2, type: 1, flags: Self.up, name: "eth0"))
        table.insert(NetlinkAddress(family: family, prefixLength: prefixLength, flags: 0x80, index: 2, address: address))
        let nexthop = [NetlinkNexthop(interfaceIndex: 2, gateway: nil, flags: 0)]
        table.insert(NetlinkRoute(family: family, destinationLength: 0, destination: [], table: Netlink.Table.main,
                                  type: Netlink.RouteType.unicast, priority: 1024, nexthops: nexthop))
        table.insert(NetlinkRoute(family: family, destinationLength: prefixLength, destination: linkLocalPrefix, table: Netlink.Table.main,
                                  type: Netlink.RouteType.unicast, priority: 256, nexthops: nexthop))
        return table
    }

    @Test func anIPv6LinkLocalAddressServesOnlyLinkLocalDestinations() {
        let family = Netlink.Family.inet6
        let fe80: [UInt8] = [0xfe, 0x80] + [UInt8](repeating: 0, count: 14)
        var table = table(family: family, address: fe80.dropLast() + [1], linkLocalPrefix: fe80, prefixLength: 64)
        let global = IPAddressBytes(family: family, bytes: [0x20, 0x01, 0x0d, 0xb8, 0, 1] + [UInt8](repeating: 0, count: 9) + [9])
        let neighbour = IPAddressBytes(family: family, bytes: fe80.dropLast() + [0x77])
        #expect(RouteLookup.verdict(for: global, in: table) == .notReachable)
        #expect(RouteLookup.defaultRouteVerdict(in: table) == .notReachable)
        #expect(RouteLookup.verdict(for: neighbour, in: table) == .reachable(interfaceIndex: 2))
        table.insert(NetlinkAddress(family: family, prefixLength: 64, flags: 0x80, index: 2,
                                    address: [0x20, 0x01, 0x0d, 0xb8] + [UInt8](repeating: 0, count: 11) + [1]))
        #expect(RouteLookup.verdict(for: global, in: table) == .reachable(interfaceIndex: 2))
        #expect(RouteLookup.defaultRouteVerdict(in: table) == .reachable(interfaceIndex: 2))
    }

    @Test func anIPv4LinkLocalAddressServesOnlyLinkLocalDestinations() {
        let family = Netlink.Family.inet
        var table = table(family: family, address: [169, 254, 7, 1], linkLocalPrefix: [169, 254, 0, 0], prefixLength: 16)
        let global = IPAddressBytes(family: family, bytes: [203, 0, 113, 9])
        #expect(RouteLookup.verdict(for: global, in: table) == .notReachable)
        #expect(RouteLookup.defaultRouteVerdict(in: table) == .notReachable)
        #expect(RouteLookup.verdict(for: IPAddressBytes(family: family, bytes: [169, 254, 9, 9]), in: table) == .reachable(interfaceIndex: 2))
        table.insert(NetlinkAddress(family: family, prefixLength: 24, flags: 0x80, index: 2, address: [192, 0, 2, 1]))
        #expect(RouteLookup.verdict(for: global, in: table) == .reachable(interfaceIndex: 2))
    }
}
