import Testing
@testable import UVNetworking

/// The recording's later steps, replayed after the main ones: a default route replaced in
/// place, every address flushed, a link deleted (as when it moves to another namespace).
@Suite(.tags(.loopback)) struct ReachabilityMonitorLaterStepsTests {
    typealias R = MonitorReplay

    /// Replays `all`, then each later step; returns the reports each later step gave.
    private func laterReports(_ target: ReachabilityMonitor.Target) -> (reports: [[NetworkReachabilityStatus]], machine: ReachabilityMonitor) {
        var replay = R(target)
        _ = replay.startAndClassify()
        for step in RecordedNetlink.all.dropFirst() {
            _ = replay.change(to: step)
            _ = replay.handle(.settleTimerFired)
        }
        var reports: [[NetworkReachabilityStatus]] = []
        for step in RecordedNetlink.later {
            var actions = replay.change(to: step)
            actions += replay.handle(.settleTimerFired)
            reports.append(actions.compactMap { if case .report(let status) = $0 { status } else { nil } })
        }
        return (reports, replay.machine)
    }

    @Test func theGeneralManagerHearsOnlyTheFlush() {
        let (reports, machine) = laterReports(.general)
        // Replaced: still reachable, no report; flushed: gone; re-added then deleted: still gone.
        #expect(reports == [[], [.notReachable], []])
        #expect(machine.table.links[3] == nil && machine.kinds[3] == nil)
        #expect(!machine.table.addresses.values.contains { $0.index == 3 })
    }

    @Test func aReplacedDefaultRouteIsOneEntryWithTheNewGateway() {
        var replay = R(.general)
        _ = replay.startAndClassify()
        for step in RecordedNetlink.all.dropFirst() {
            _ = replay.change(to: step)
            _ = replay.handle(.settleTimerFired)
        }
        _ = replay.change(to: RecordedNetlink.defaultReplaced)
        // Before any dump: the notification alone overwrote the old route.
        let defaults = replay.machine.table.routes.values.filter {
            $0.family == Netlink.Family.inet && $0.table == Netlink.Table.main && $0.destinationLength == 0
        }
        #expect(defaults.map { $0.nexthops.first?.gateway } == [[192, 0, 2, 253]])
        #expect(replay.handle(.settleTimerFired) == [])
    }

    @Test func anAddressOnTheLinkGoesWithTheFlushAndStaysGone() {
        #expect(laterReports(.address(SocketAddress(numericHost: "192.0.2.77", port: 0)!)).reports == [[], [.notReachable], []])
        #expect(laterReports(.address(SocketAddress(numericHost: "127.0.0.1", port: 0)!)).reports == [[], [], []])
    }
}
