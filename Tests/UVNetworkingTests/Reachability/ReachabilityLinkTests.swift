import Foundation
import Testing

/// The client's own link down and up, in a namespace of the test's own: the general manager,
/// the router's addresses and its name go unreachable and come back, each transition reported
/// once, in order, within a second; loopback says nothing throughout.
@Suite(.serialized, .enabled(if: RouterNamespace.isAvailable, "\(RouterNamespace.unavailableReason ?? "")"))
struct ReachabilityLinkTests {
    static let managers = [ReachabilityWatch.general, ReachabilityWatch.behindIPv4, ReachabilityWatch.behindIPv6,
                           ReachabilityWatch.loopback, ReachabilityWatch.domain]
    /// Every manager but loopback's: what the veth carries.
    static let overTheVeth = managers.filter { $0 != ReachabilityWatch.loopback }

    @Test(.timeLimit(.minutes(2)))
    func startReportsEveryTargetOnceWithItsInterfaceKind() throws {
        let namespace = try RouterNamespace(hosts: RouterNamespace.hostsWithRouter)
        let watch = try ReachabilityWatch(namespace, managers: Self.managers)
        let delays = watch.expectReadings(since: watch.startedAt, ReachabilityWatch.reachable(Self.managers), "start")
        recordDelays("start", delays)
        let statuses = watch.statuses()
        #expect(statuses["general"] == "reachable:ethernet true" && statuses["loopback"] == "reachable:other true", "\(statuses)")
        #expect(watch.finish() == 0, "\(watch.process.text)")
    }

    @Test(.timeLimit(.minutes(2)))
    func linkDownThenUpIsReportedOncePerTransitionWithinASecond() throws {
        let namespace = try RouterNamespace(hosts: RouterNamespace.hostsWithRouter)
        let watch = try ReachabilityWatch(namespace, managers: Self.managers)
        watch.expectReadings(since: watch.startedAt, ReachabilityWatch.reachable(Self.managers), "start")
        var delays: [Int64] = []
        for round in 1...2 {
            let down = monotonicMilliseconds()
            try namespace.setClientLink(up: false)
            delays += watch.expectReadings(since: down, ReachabilityWatch.all(Self.overTheVeth, "notReachable"), "link down (round \(round))")
            #expect(watch.statuses()["loopback"] == "reachable:other true")
            let up = monotonicMilliseconds()
            try namespace.setClientLink(up: true)
            delays += watch.expectReadings(since: up, ReachabilityWatch.reachable(Self.overTheVeth), "link up (round \(round))")
        }
        recordDelays("link down/up", delays)
        #expect(watch.finish() == 0, "\(watch.process.text)")
    }

    /// Down and up again within a millisecond or so: either nothing at all (the settle time
    /// swallowed the flap) or one notReachable then one reachable per manager; never the same
    /// status twice in a row, never left unreachable.
    @Test(.timeLimit(.minutes(2)))
    func aFlapGivesOneReadingPerTransitionAndNeverADuplicate() throws {
        let namespace = try RouterNamespace(hosts: RouterNamespace.hostsWithRouter)
        let watch = try ReachabilityWatch(namespace, managers: Self.managers)
        watch.expectReadings(since: watch.startedAt, ReachabilityWatch.reachable(Self.managers), "start")
        for round in 1...3 {
            let flap = monotonicMilliseconds()
            try namespace.flapClientLink()
            // Whatever comes comes within the bound; wait past it, then more for duplicates.
            usleep(2_500_000)
            for manager in Self.managers {
                let label = ReachabilityWatch.label(manager)
                for source in ["event", "note", "stream"] {
                    let got = watch.readings(source, since: flap).filter { $0.label == label }
                    let allowed: [[String]] = manager == ReachabilityWatch.loopback ? [[]] : [[], ["notReachable", "reachable:ethernet"]]
                    #expect(allowed.contains(got.map(\.status)), "flap \(round): \(label)'s \(source) readings \(got)")
                    #expect(got.allSatisfy { $0.milliseconds - flap <= 1000 }, "flap \(round): \(label) late: \(got)")
                }
            }
            let statuses = watch.statuses()
            #expect(statuses["general"] == "reachable:ethernet true" && statuses["v4"] == "reachable:ethernet true", "\(statuses)")
        }
        #expect(watch.finish() == 0, "\(watch.process.text)")
    }
}
