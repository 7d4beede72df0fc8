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

    /// A route is one per table, destination and metric, and (IPv6 keeps one route per nexthop at
    /// the same metric) per first nexthop. A route replaced in place with a new nexthop
    /// (NLM_F_REPLACE) leaves the old entry until the next route dump: the machine dumps routes
    /// after every link or address change, which is when nexthops change in practice.
    struct RouteKey: Hashable {
        var family: UInt8
        var table: UInt32
        var destinationLength: UInt8
        var destination: [UInt8]
        var priority: UInt32
        var interfaceIndex: Int32
        var gateway: [UInt8]?

        init(_ route: NetlinkRoute) {
            family = route.family
            table = route.table
            destinationLength = route.destinationLength
            destination = route.destination
            priority = route.priority
            interfaceIndex = route.nexthops.first?.interfaceIndex ?? 0
            gateway = route.nexthops.first?.gateway
        }
    }

    mutating func insert(_ link: NetlinkLink) { links[link.index] = link }

    /// Removes the link and its addresses (the kernel sends their RTM_DELADDR too, but not always
    /// before the link's own message).
    mutating func remove(_ link: NetlinkLink) {
        links[link.index] = nil
        addresses = addresses.filter { $0.value.index != link.index }
    }

    mutating func insert(_ address: NetlinkAddress) { addresses[AddressKey(address)] = address }
    mutating func remove(_ address: NetlinkAddress) { addresses[AddressKey(address)] = nil }
    mutating func insert(_ route: NetlinkRoute) { routes[RouteKey(route)] = route }
    mutating func remove(_ route: NetlinkRoute) { routes[RouteKey(route)] = nil }

    /// Whether traffic of `family` can leave by this interface: up (IFF_UP), with carrier
    /// (IFF_LOWER_UP) and holding an address of the family that is not tentative or DAD-failed.
    func isUsable(interface index: Int32, family: UInt8) -> Bool {
        guard let link = links[index], link.isUp, link.hasCarrier else { return false }
        return addresses.values.contains { $0.index == index && $0.family == family && $0.isUsable }
    }
}
