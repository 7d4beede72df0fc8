import Foundation
import Testing

/// Carrier loss: the router's side of the veth goes down, so the client's link stays up (and
/// keeps its routes, marked linkdown, with no route message at all) but has no carrier. The
/// kernel may defer publishing a carrier change (its link-watch work runs about once a second,
/// for the whole machine), so the second counts from when the client's link changed state.
@Suite(.tags(.namespace), .serialized, .enabled(if: RouterNamespace.isAvailable, "\(RouterNamespace.unavailableReason ?? "")"))
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
            let lostPublished = namespace.clientOperstateChanged(to: "DOWN")
            #expect(lostPublished != nil, "the client's link never lost its carrier")
            delays += watch.expectReadings(since: lost, published: lostPublished, ReachabilityWatch.all(ReachabilityLinkTests.overTheVeth, "notReachable"), "carrier lost (round \(round))")
            let back = monotonicMilliseconds()
            try namespace.setRouterLink(up: true)
            let backPublished = namespace.clientOperstateChanged(to: "UP")
            #expect(backPublished != nil, "the client's link never got its carrier back")
            delays += watch.expectReadings(since: back, published: backPublished, ReachabilityWatch.reachable(ReachabilityLinkTests.overTheVeth), "carrier back (round \(round))")
        }
        recordDelays("carrier", delays)
        #expect(watch.finish() == 0, "\(watch.process.text)")
    }
}
