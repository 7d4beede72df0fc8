/// The machine's decision: the target's status from the table, reported when it changed.
extension ReachabilityMonitor {
    /// Reports the status when it can be known and differs from the last report. It cannot be
    /// known before every kind was dumped once, before a host's first DNS answer, or while the
    /// interface the route leaves by is not classified yet (its answer calls this again).
    mutating func evaluate(into actions: inout [Action]) {
        guard dumped.count == NetlinkDumpKind.allCases.count, let status = currentStatus(), status != reported else { return }
        reported = status
        actions.append(.report(status))
    }

    /// The status the table gives, nil when it cannot be known yet.
    func currentStatus() -> NetworkReachabilityStatus? {
        let verdict: RouteVerdict
        switch target {
        case .general:
            verdict = RouteLookup.defaultRouteVerdict(in: table)
        case .address(let address):
            verdict = RouteLookup.verdict(for: IPAddressBytes(address), in: table)
        case .host:
            switch resolution {
            case .none:
                return nil
            case .failed:
                verdict = .notReachable
            case .addresses(let addresses):
                // Any address will do: a client tries them all (Happy Eyeballs).
                verdict = addresses.lazy.map { RouteLookup.verdict(for: $0, in: table) }
                    .first { $0 != .notReachable } ?? .notReachable
            }
        }
        switch verdict {
        case .notReachable:
            return .notReachable
        case .reachable(let index):
            guard let kind = kind(of: index) else { return nil }
            return .reachable(kind)
        }
    }

    /// Loopback is `.other` without asking; any other interface's kind is sysfs's answer.
    func kind(of index: Int32) -> NetworkInterfaceKind? {
        if table.links[index]?.isLoopback == true { return .other }
        return kinds[index]
    }
}
