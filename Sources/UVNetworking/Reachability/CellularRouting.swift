/// How a connection that must not use cellular (`Request.allowsCellularAccess` false) reaches
/// one address: pure logic over the kernel's routing table (`NetworkTable`, read with
/// `NetworkTableSnapshot`) and the interfaces' kinds (`InterfaceClassifier`), so that tests can
/// decide without sockets.
///
/// The route the kernel would take is looked up as `RouteLookup` does for reachability. Over
/// loopback (a local address) nothing changes. Over another non-cellular interface, the socket
/// is bound to that interface, so that a later change of routes cannot move the connection onto
/// cellular. Over a cellular one, the best route that
/// avoids every cellular interface is looked up instead and the socket bound to its interface:
/// the kernel, asked for a route out of that interface only, picks the same route. No such
/// route: the address is denied.
enum CellularRouting {
    enum Decision: Equatable {
        /// The kernel's route is not cellular: connect with the socket bound to its interface,
        /// or, where binding is not allowed, as usual.
        case pin(interface: String)
        /// The kernel's route is cellular: connect with the socket bound to this other
        /// interface, which reaches the address, or not at all.
        case reroute(interface: String)
        /// Connect as usual: the address is local (delivered over loopback), or the kernel has
        /// no route to it and the connect fails as it would without the rule.
        case unbound
        /// Only cellular interfaces reach the address; `reason` says which.
        case denied(reason: String)
    }

    /// The decision for `address`. `kind` classifies an interface by name; it is asked only
    /// about interfaces that carry a route to the address (it reads sysfs: the caller runs
    /// this on a worker).
    static func decide(for address: IPAddressBytes, in table: NetworkTable,
                       kind: (String) -> NetworkInterfaceKind) -> Decision {
        guard case .reachable(let index) = RouteLookup.verdict(for: address, in: table),
              let link = table.links[index], !link.isLoopback else { return .unbound }
        if kind(link.name) != .cellular { return .pin(interface: link.name) }
        // Every cellular interface is left out at once: another one would be cellular too.
        var cellular: Set<Int32> = [index]
        for other in table.links.values where other.index != index && !other.isLoopback && kind(other.name) == .cellular {
            cellular.insert(other.index)
        }
        if case .reachable(let other) = RouteLookup.verdict(for: address, in: table, excluding: cellular),
           let alternative = table.links[other] {
            return .reroute(interface: alternative.name)
        }
        let names = cellular.compactMap { table.links[$0]?.name }.sorted().joined(separator: ", ")
        return .denied(reason: "only cellular interfaces (\(names)) have a route to it")
    }
}
