import Foundation
import Testing

/// The client's addresses removed and restored. The IPv6 default route is left out (the kernel
/// keeps it when the address goes, and whether a link with only a link-local address reaches
/// anything is not this test's question): with the addresses go the connected routes and,
/// silently, the IPv4 default route, so everything over the veth becomes unreachable while
/// loopback stays as it was.
@Suite(.tags(.namespace), .serialized, .enabled(if: RouterNamespace.isAvailable, "\(RouterNamespace.unavailableReason ?? "")"))
struct ReachabilityAddressTests {
    @Test(.timeLimit(.minutes(2)))
    func removingTheAddressMakesTheRouterUnreachableAndLoopbackStays() throws {
        let namespace = try RouterNamespace(hosts: RouterNamespace.hostsWithRouter)
        try namespace.deleteIPv6DefaultRoute()
        let managers = ReachabilityLinkTests.managers
        let watch = try ReachabilityWatch(namespace, managers: managers)
        watch.expectReadings(since: watch.startedAt, ReachabilityWatch.reachable(managers), "start")
        var delays: [Int64] = []
        for round in 1...2 {
            let removed = monotonicMilliseconds()
            try namespace.removeClientAddresses()
            delays += watch.expectReadings(since: removed, ReachabilityWatch.all(ReachabilityLinkTests.overTheVeth, "notReachable"), "addresses removed (round \(round))")
            let restored = monotonicMilliseconds()
            try namespace.restoreClientAddresses(ipv6DefaultRoute: false)
            delays += watch.expectReadings(since: restored, ReachabilityWatch.reachable(ReachabilityLinkTests.overTheVeth), "addresses restored (round \(round))")
        }
        recordDelays("address", delays)
        #expect(watch.finish() == 0, "\(watch.process.text)")
    }
}
