import Testing
@testable import UVNetworking

/// Managers for one address, replayed through recorded kernel changes.
@Suite(.tags(.loopback)) struct ReachabilityMonitorAddressTests {
    typealias R = MonitorReplay

    private func replay(_ host: String) -> MonitorReplay {
        R(.address(SocketAddress(numericHost: host, port: 443)!))
    }

    /// Replays every recorded change after the start and returns the reports in order.
    private func reports(_ host: String) -> [NetworkReachabilityStatus] {
        var replay = replay(host)
        var actions = replay.startAndClassify()
        for step in RecordedNetlink.all.dropFirst() {
            actions += replay.change(to: step)
            actions += replay.handle(.settleTimerFired)
        }
        return actions.compactMap { if case .report(let status) = $0 { status } else { nil } }
    }

    @Test func loopbackIsReachableThroughEveryChange() {
        #expect(reports("127.0.0.1") == [.reachable(.other)])
        #expect(reports("::1") == [.reachable(.other)])
        #expect(reports("127.1.2.3") == [.reachable(.other)])
    }

    @Test func loopbackNeedsNoClassification() {
        var replay = replay("127.0.0.1")
        #expect(replay.handle(.started) == [R.send(.links, 1), .classify(index: 2, name: "veth1"), .classify(index: 3, name: "veth0"),
                                            R.send(.addresses, 2), R.send(.routes, 3), .report(.reachable(.other))])
    }

    @Test func anAddressOnTheConnectedSubnetOutlivesTheDefaultRoutes() {
        // The connected route comes back with the link (the IPv4 address stayed); the default
        // routes' changes do not matter to it.
        #expect(reports("192.0.2.77") == [.reachable(.ethernet),
                                          .notReachable, .reachable(.ethernet),  // link down, link up
                                          .notReachable, .reachable(.ethernet),  // address removed, restored
                                          .notReachable, .reachable(.ethernet)])  // carrier lost, back
    }

    @Test func anAddressBehindTheDefaultRouteFollowsIt() {
        #expect(reports("203.0.113.9") == [.reachable(.ethernet),
                                           .notReachable, .reachable(.ethernet),  // link down; defaults restored
                                           .notReachable, .reachable(.ethernet),  // IPv4 default deleted, added
                                           .notReachable, .reachable(.ethernet),  // address removed, restored
                                           .notReachable, .reachable(.ethernet)])  // carrier lost, back
    }

    /// An IPv4-mapped IPv6 address (::ffff:a.b.c.d) leaves as IPv4, by IPv4's routes.
    @Test func anIPv4MappedAddressFollowsIPv4() {
        #expect(reports("::ffff:192.0.2.77") == reports("192.0.2.77"))
        #expect(reports("::ffff:203.0.113.9") == reports("203.0.113.9"))
        #expect(reports("::ffff:127.0.0.1") == [.reachable(.other)])
    }

    @Test func anIPv6AddressUsesTheIPv6DefaultRoute() {
        var replay = replay("2001:db8:1::9")
        #expect(replay.startAndClassify().last == .report(.reachable(.ethernet)))
        _ = replay.change(to: RecordedNetlink.ipv4DefaultDeleted)
        #expect(replay.handle(.settleTimerFired) == [])
        _ = replay.change(to: RecordedNetlink.ipv6DefaultDeleted)
        #expect(replay.handle(.settleTimerFired) == [.report(.notReachable)])
    }

    @Test func aBlackholeRouteIsNotReachableAndALongerPrefixBeatsIt() {
        var blackholed = replay("198.51.100.7")
        // Known at once: no interface to classify.
        #expect(blackholed.handle(.started).last == .report(.notReachable))
        var multipath = replay("198.51.100.200")
        #expect(multipath.startAndClassify().last == .report(.reachable(.ethernet)))
    }
}
