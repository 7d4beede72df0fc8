/// Where the kernel would send a packet, as far as the reachability decision needs to know.
enum RouteVerdict: Equatable {
    /// A usable route leaves by this interface.
    case reachable(interfaceIndex: Int32)
    /// No route, or a route that drops (blackhole, unreachable, prohibit), or only dead ways out.
    case notReachable
}

/// Route lookup over a `NetworkTable`, following the kernel's default policy rules: the local
/// table (255), then main (254), then default (253). Other tables and custom policy rules (`ip
/// rule`) are not followed: reading the rules would need RTM_GETRULE and the machine would still
/// not know a packet's mark or source, so a route reached only through them is not seen.
enum RouteLookup {
    static let tables = [Netlink.Table.local, Netlink.Table.main, Netlink.Table.default]

    /// The verdict for one address: the longest matching prefix first, then the lowest metric;
    /// a unicast route whose every nexthop is dead or unusable is passed over for the next
    /// match, as the kernel passes over dead nexthops; a drop ends the lookup; a throw route
    /// sends it on to the next table. A route for a TOS other than 0 is left out: it matches
    /// only packets of that TOS, and a client's carry none. Nexthops over the interfaces in
    /// `excluded` count as unusable: the way out a socket bound to another interface would take
    /// (cellular routing, `CellularRouting`).
    static func verdict(for address: IPAddressBytes, in table: NetworkTable, excluding excluded: Set<Int32> = []) -> RouteVerdict {
        for id in tables {
            let candidates = table.routes.values
                .filter { $0.table == id && $0.family == address.family && $0.tos == 0
                    && address.hasPrefix($0.destination, length: $0.destinationLength) }
                .sorted(by: preferred)
            switch firstVerdict(candidates, family: address.family, linkLocal: address.isLinkLocal, in: table, excluding: excluded) {
            case .some(let verdict): return verdict
            case .none: continue
            }
        }
        return .notReachable
    }

    /// The general manager's verdict: a default route (dst_len 0) of the main table over a usable
    /// interface, IPv4 first, then IPv6.
    static func defaultRouteVerdict(in table: NetworkTable) -> RouteVerdict {
        for family in [Netlink.Family.inet, Netlink.Family.inet6] {
            let candidates = table.routes.values
                .filter { $0.table == Netlink.Table.main && $0.family == family && $0.destinationLength == 0 && $0.tos == 0 }
                .sorted(by: preferred)
            if case .reachable(let index)? = firstVerdict(candidates, family: family, linkLocal: false, in: table) {
                return .reachable(interfaceIndex: index)
            }
        }
        return .notReachable
    }

    /// Longer prefix first, then lower metric; the interface index only makes ties deterministic.
    private static func preferred(_ a: NetlinkRoute, _ b: NetlinkRoute) -> Bool {
        let aIndex = a.nexthops.first?.interfaceIndex ?? 0
        let bIndex = b.nexthops.first?.interfaceIndex ?? 0
        return (a.destinationLength, b.priority, bIndex) > (b.destinationLength, a.priority, aIndex)
    }

    /// Walks routes in preference order. Nil: nothing decided in this table (no route, only
    /// dead ones, or a throw) and the next table is asked. `linkLocal`: the destination is
    /// link-local, so a link-local source will do.
    private static func firstVerdict(_ routes: [NetlinkRoute], family: UInt8, linkLocal: Bool, in table: NetworkTable,
                                     excluding excluded: Set<Int32> = []) -> RouteVerdict? {
        for route in routes {
            switch route.type {
            case Netlink.RouteType.blackhole, Netlink.RouteType.unreachable, Netlink.RouteType.prohibit:
                return .notReachable
            case Netlink.RouteType.throw:
                return nil
            case Netlink.RouteType.local:
                // Local addresses are delivered over loopback whatever interface holds them.
                if let loopback = table.links.values.first(where: \.isLoopback), !excluded.contains(loopback.index),
                   table.isUsable(interface: loopback.index, family: family) {
                    return .reachable(interfaceIndex: loopback.index)
                }
            case Netlink.RouteType.unicast, Netlink.RouteType.broadcast, Netlink.RouteType.anycast, Netlink.RouteType.multicast:
                // Multipath: any usable nexthop will do.
                if let nexthop = route.nexthops.first(where: { $0.isAlive && !excluded.contains($0.interfaceIndex)
                    && table.isUsable(interface: $0.interfaceIndex, family: family, linkLocalDestination: linkLocal) }) {
                    return .reachable(interfaceIndex: nexthop.interfaceIndex)
                }
            default:
                continue  // NAT, external resolver: nothing a client can use.
            }
        }
        return nil
    }
}
