import Foundation
import Testing

/// Carrier loss: the router's side of the veth goes down, so the client's link stays up (and
/// keeps its routes, marked linkdown, with no route message at all) but has no carrier.
@Suite(.serialized, .enabled(if: RouterNamespace.isAvailable, "\(RouterNamespace.unavailableReason ?? "")"))
struct ReachabilityCarrierTests {
    @Test(.timeLimit(.minutes(2)))
    func carrierLossAndReturnAreReportedOnceEachWithinASecond() throws {
        let namespace = try RouterNamespace(hosts: RouterNamespace.hostsWithRouter)
        let managers = ReachabilityLinkTests.managers
        let watch = try ReachabilityWatch(namespace, managers: managers)
        watch.expectReadings(since: watch.startedAt, ReachabilityWatch.reachable(managers), "start")
        var delays: [Int64] = []
        for round in 1...2 {
            let lost = monotonicMilliseconds()
            try namespace.setRouterLink(up: false)
            delays += watch.expectReadings(since: lost, ReachabilityWatch.all(ReachabilityLinkTests.overTheVeth, "notReachable"), "carrier lost (round \(round))")
            let back = monotonicMilliseconds()
            try namespace.setRouterLink(up: true)
            delays += watch.expectReadings(since: back, ReachabilityWatch.reachable(ReachabilityLinkTests.overTheVeth), "carrier back (round \(round))")
        }
        recordDelays("carrier", delays)
        #expect(watch.finish() == 0, "\(watch.process.text)")
    }
}
