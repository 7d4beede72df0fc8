import Foundation
import Testing

/// The default routes removed and restored: the general manager follows them, while the router's
/// addresses stay reachable over the connected subnet, and nothing else is reported.
@Suite(.tags(.namespace), .serialized, .enabled(if: RouterNamespace.isAvailable, "\(RouterNamespace.unavailableReason ?? "")"))
struct ReachabilityDefaultRouteTests {
    @Test(.timeLimit(.minutes(2)))
    func onlyTheGeneralManagerFollowsTheDefaultRoutes() throws {
        let namespace = try RouterNamespace(hosts: RouterNamespace.hostsWithRouter)
        let managers = ReachabilityLinkTests.managers
        let watch = try ReachabilityWatch(namespace, managers: managers)
        watch.expectReadings(since: watch.startedAt, ReachabilityWatch.reachable(managers), "start")
        var delays: [Int64] = []
        for round in 1...2 {
            let removed = monotonicMilliseconds()
            try namespace.deleteDefaultRoutes()
            delays += watch.expectReadings(since: removed, ["general": "notReachable"], "default routes removed (round \(round))")
            let restored = monotonicMilliseconds()
            try namespace.addDefaultRoutes()
            delays += watch.expectReadings(since: restored, ["general": "reachable:ethernet"], "default routes restored (round \(round))")
        }
        recordDelays("default route", delays)
        #expect(watch.finish() == 0, "\(watch.process.text)")
    }
}
