import Foundation
import Testing

/// The client's own link down and up, in a namespace of the test's own: the general manager,
/// the router's addresses and its name go unreachable and come back, each transition reported
/// once, in order, within a second; loopback says nothing throughout.
@Suite(.tags(.namespace), .serialized, .enabled(if: RouterNamespace.isAvailable, "\(RouterNamespace.unavailableReason ?? "")"))
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
            // The carrier comes back through the kernel's link-watch work, which may defer it.
            let published = namespace.clientOperstateChanged(to: "UP")
            delays += watch.expectReadings(since: up, published: published, ReachabilityWatch.reachable(Self.overTheVeth), "link up (round \(round))")
        }
        recordDelays("link down/up", delays)
        #expect(watch.finish() == 0, "\(watch.process.text)")
    }

    /// Down and up again within a millisecond or so: either nothing at all (the settle time
    /// swallowed the flap) or one notReachable then one reachable per manager; never the same
    /// status twice in a row, never left unreachable. The kernel may hold the carrier back for
    /// up to a second after such a flap (its link-watch work): the link is up without carrier
    /// meanwhile, so notReachable is right then, and reachable is due within a second of the
    /// carrier's return.
    @Test(.timeLimit(.minutes(2)))
    func aFlapGivesOneReadingPerTransitionAndNeverADuplicate() throws {
        let namespace = try RouterNamespace(hosts: RouterNamespace.hostsWithRouter)
        let watch = try ReachabilityWatch(namespace, managers: Self.managers)
        watch.expectReadings(since: watch.startedAt, ReachabilityWatch.reachable(Self.managers), "start")
        for round in 1...3 {
            let flap = monotonicMilliseconds()
            try namespace.flapClientLink()
            let carrier = try #require(namespace.clientOperstateChanged(to: "UP"), "the link never came back up")
            // Whatever comes comes within the bound; wait past it, then more for duplicates.
            _ = waitUntil(timeout: 10) { monotonicMilliseconds() > max(flap, carrier) + 2_500 }
            let seen = watch.readings(since: flap).map { "\($0.label) \($0.status) \($0.milliseconds - flap) ms" }
            FileHandle.standardError.write(Data("reachability readings (flap \(round), carrier \(carrier - flap) ms): \(seen)\n".utf8))
            for manager in Self.managers {
                let label = ReachabilityWatch.label(manager)
                for source in ["event", "note", "stream"] {
                    let got = watch.readings(source, since: flap).filter { $0.label == label }
                    let allowed: [[String]] = manager == ReachabilityWatch.loopback ? [[]] : [[], ["notReachable", "reachable:ethernet"]]
                    #expect(allowed.contains(got.map(\.status)), "flap \(round): \(label)'s \(source) readings \(got)")
                    for reading in got {
                        let from = reading.status == "notReachable" ? flap : max(flap, carrier)
                        #expect(reading.milliseconds - from <= 1000, "flap \(round): \(label) late: \(reading), carrier back at \(carrier - flap) ms")
                    }
                }
            }
            let statuses = watch.statuses()
            #expect(statuses["general"] == "reachable:ethernet true" && statuses["v4"] == "reachable:ethernet true", "\(statuses)")
        }
        #expect(watch.finish() == 0, "\(watch.process.text)")
    }

    /// Down for 300 ms, longer than any settle time: each manager over the veth reports
    /// notReachable once and reachable once, in that order. Up so soon after down, the kernel
    /// holds the carrier back (its link-watch work runs about once a second), so the link is up
    /// without carrier for a while first: that must not read as reachable.
    @Test(.timeLimit(.minutes(2)))
    func aShortOutageIsReportedOnceEachWayInOrder() throws {
        let namespace = try RouterNamespace(hosts: RouterNamespace.hostsWithRouter)
        let watch = try ReachabilityWatch(namespace, managers: Self.managers)
        watch.expectReadings(since: watch.startedAt, ReachabilityWatch.reachable(Self.managers), "start")
        for round in 1...2 {
            let down = monotonicMilliseconds()
            try namespace.setClientLink(up: false)
            usleep(300_000)
            try namespace.setClientLink(up: true)
            let carrier = try #require(namespace.clientOperstateChanged(to: "UP"), "the link never came back up")
            _ = waitUntil(timeout: 10) { monotonicMilliseconds() > carrier + 2_500 }
            let seen = watch.readings(since: down).map { "\($0.label) \($0.status) \($0.milliseconds - down) ms" }
            FileHandle.standardError.write(Data("reachability readings (outage \(round), carrier \(carrier - down) ms): \(seen)\n".utf8))
            for manager in Self.managers {
                let label = ReachabilityWatch.label(manager)
                let want = manager == ReachabilityWatch.loopback ? [] : ["notReachable", "reachable:ethernet"]
                for source in ["event", "note", "stream"] {
                    let got = watch.readings(source, since: down).filter { $0.label == label }
                    #expect(got.map(\.status) == want, "outage \(round): \(label)'s \(source) readings \(got)")
                    if got.count == 2 {
                        #expect(got[0].milliseconds - down <= 1000, "outage \(round): \(label) late: \(got[0])")
                        #expect(got[1].milliseconds - carrier <= 1000, "outage \(round): \(label) late: \(got[1]), carrier back at \(carrier - down) ms")
                    }
                }
            }
        }
        #expect(watch.finish() == 0, "\(watch.process.text)")
    }
}
