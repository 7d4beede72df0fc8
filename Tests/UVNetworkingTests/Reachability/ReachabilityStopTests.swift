import Foundation
import Testing

/// stopMonitoring closes what monitoring opened (the descriptor count is back at the probe's
/// baseline), reports nothing more whatever the network does, and a second start reads afresh.
@Suite(.tags(.namespace), .serialized, .enabled(if: RouterNamespace.isAvailable, "\(RouterNamespace.unavailableReason ?? "")"))
struct ReachabilityStopTests {
    @Test(.timeLimit(.minutes(2)))
    func stopClosesTheNetlinkSocketsAndSilencesEveryManager() throws {
        let namespace = try RouterNamespace(hosts: RouterNamespace.hostsWithRouter)
        let managers = ReachabilityLinkTests.managers
        let watch = try ReachabilityWatch(namespace, managers: managers)
        watch.expectReadings(since: watch.startedAt, ReachabilityWatch.reachable(managers), "start")
        #expect(watch.descriptors().count > watch.baselineDescriptors, "monitoring holds descriptors of its own")

        for round in 1...2 {
            let stopped = try #require(watch.command("stop", answer: "stopped"))
            var descriptors = watch.descriptors()
            _ = waitUntil(timeout: 5) {
                descriptors = watch.descriptors()
                return descriptors.count == watch.baselineDescriptors
            }
            #expect(descriptors.count == watch.baselineDescriptors, "round \(round): \(descriptors.count) open after stop, \(watch.baselineDescriptors) before start: \(descriptors.targets)")
            let statuses = watch.statuses()
            #expect(statuses.values.allSatisfy { $0 == "unknown false" }, "round \(round): \(statuses)")
            // Every stream ends at stop.
            #expect(waitUntil(timeout: 5) { watch.process.lines.filter { $0.hasPrefix("stream-end ") }.count == managers.count * round })

            // The network changes; nobody may hear of it.
            try namespace.setClientLink(up: round == 2)
            usleep(1_500_000)
            let late = ["event", "note", "stream"].flatMap { watch.readings($0, since: stopped) }
            #expect(late.isEmpty, "round \(round): reported after stopMonitoring: \(late)")

            // Started again: a fresh first reading of the network as it is now.
            let restarted = monotonicMilliseconds()
            _ = watch.command("start", answer: "started")
            let expected = round == 1
                ? ReachabilityWatch.all(ReachabilityLinkTests.overTheVeth, "notReachable").merging(["loopback": "reachable:other"]) { $1 }
                : ReachabilityWatch.reachable(managers)
            watch.expectReadings(since: restarted, expected, "restart \(round)")
        }
        _ = watch.command("stop", answer: "stopped")
        #expect(waitUntil(timeout: 5) { watch.descriptors().count == watch.baselineDescriptors })
        #expect(watch.finish() == 0, "\(watch.process.text)")
    }
}
