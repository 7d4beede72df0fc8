/// What the kernel told us about the network: links by index, their addresses, and routes of
/// every table, kept up to date from dumps and notifications.
struct NetworkTable: Equatable {
    /// Links by interface index.
    var links: [Int32: NetlinkLink] = [:]
    /// Addresses by what identifies one to RTM_DELADDR.
    var addresses: [AddressKey: NetlinkAddress] = [:]
    /// Routes of every table by what identifies one to RTM_DELROUTE.
    var routes: [RouteKey: NetlinkRoute] = [:]

    /// An address is one per interface, family, prefix and address; its flags may change
    /// (tentative → permanent) under the same key.
    struct AddressKey: Hashable {
        var index: Int32
        var family: UInt8
        var prefixLength: UInt8
        var address: [UInt8]

        init(_ value: NetlinkAddress) {
            index = value.index
            family = value.family
            prefixLength = value.prefixLength
            address = value.address
        }
    }

    /// What the kernel calls one route when it replaces one (NLM_F_REPLACE): family, table,
    /// destination, TOS and metric. (RTA_SRC, IPv6's source prefix, is not followed.)
    struct RouteIdentity: Hashable {
        var family: UInt8
        var table: UInt32
        var destinationLength: UInt8
        var destination: [UInt8]
        var tos: UInt8
        var priority: UInt32

        init(_ route: NetlinkRoute) {
            family = route.family
            table = route.table
            destinationLength = route.destinationLength
            destination = route.destination
            tos = route.tos
            priority = route.priority
        }
    }

    /// Several routes may share an identity and differ by nexthop (IPv4's `ip route append`
    /// aliases, IPv6's per-device routes such as fe80::/64 on every link): each is kept under its
    /// identity and first nexthop, which is what RTM_DELROUTE names.
    struct RouteKey: Hashable {
        var identity: RouteIdentity
        var interfaceIndex: Int32
        var gateway: [UInt8]?

        init(_ route: NetlinkRoute) {
            identity = RouteIdentity(route)
            interfaceIndex = route.nexthops.first?.interfaceIndex ?? 0
            gateway = route.nexthops.first?.gateway
        }
    }

    mutating func insert(_ link: NetlinkLink) { links[link.index] = link }

    /// Whether a RTM_NEW* notification says exactly what the table holds already.
    func holds(_ body: NetlinkMessage.Body) -> Bool {
        switch body {
        case .newLink(let link): links[link.index] == link
        case .newAddress(let address): addresses[AddressKey(address)] == address
        case .newRoute(let route): routes[RouteKey(route)] == route
        default: false
        }
    }

    /// Removes the link and its addresses (the kernel sends their RTM_DELADDR too, but not always
    /// before the link's own message).
    mutating func remove(_ link: NetlinkLink) {
        links[link.index] = nil
        addresses = addresses.filter { $0.value.index != link.index }
    }

    mutating func insert(_ address: NetlinkAddress) { addresses[AddressKey(address)] = address }
    mutating func remove(_ address: NetlinkAddress) { addresses[AddressKey(address)] = nil }
    mutating func insert(_ route: NetlinkRoute) { routes[RouteKey(route)] = route }

    /// Removes the route; false when the table held no route by that key.
    @discardableResult
    mutating func remove(_ route: NetlinkRoute) -> Bool { routes.removeValue(forKey: RouteKey(route)) != nil }

    /// A route that replaced one of the same identity (NLM_F_REPLACE) overwrites it. False when
    /// several shared the identity: the kernel replaced only its first, which the table cannot
    /// tell, so all were dropped and the caller must dump routes.
    @discardableResult
    mutating func replace(_ route: NetlinkRoute) -> Bool {
        let identity = RouteIdentity(route)
        let replaced = routes.keys.filter { $0.identity == identity }
        replaced.forEach { routes[$0] = nil }
        insert(route)
        return replaced.count <= 1
    }

    /// Whether traffic of `family` can leave by this interface: up (IFF_UP), with carrier
    /// (IFF_LOWER_UP) and holding an address of the family that is not tentative or DAD-failed
    /// and can be the source: a link-local address only when the destination is link-local too.
    func isUsable(interface index: Int32, family: UInt8, linkLocalDestination: Bool = false) -> Bool {
        guard let link = links[index], link.isUp, link.hasCarrier else { return false }
        return addresses.values.contains {
            $0.index == index && $0.family == family && $0.isUsable
                && (linkLocalDestination || !IPAddressBytes(family: $0.family, bytes: $0.address).isLinkLocal)
        }
    }
}
