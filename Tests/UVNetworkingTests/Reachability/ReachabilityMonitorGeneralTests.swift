import Testing
@testable import UVNetworking

/// The general manager (any default route) replayed through recorded kernel changes: each
/// transition reported once, after the changes settle and the table is dumped again.
@Suite(.tags(.unit)) struct ReachabilityMonitorGeneralTests {
    typealias R = MonitorReplay
    /// One arm per datagram of the step, up to the cap: a burst's later datagrams still land
    /// before the timer fires (each arm is at most one settle time after the previous).
    private let settles = { (step: RecordedStep) in
        Array(repeating: R.settle, count: min(step.notifications.count, ReachabilityMonitor.maxSettleArms))
    }

    @Test func initialReadingWaitsForTheDumpsAndTheInterfacesKind() {
        var replay = R(.general)
        #expect(replay.handle(.started) == [R.send(.links, 1), .classify(index: 2, name: "veth1"), .classify(index: 3, name: "veth0"),
                                            R.send(.addresses, 2), R.send(.routes, 3)])
        #expect(replay.machine.currentStatus() == nil)  // veth0's kind is not known yet
        #expect(replay.handle(.interfaceClassified(index: 2, name: "veth1", kind: .ethernet)) == [])
        #expect(replay.handle(.interfaceClassified(index: 3, name: "veth0", kind: .wifi)) == [.report(.reachable(.wifi))])
    }

    @Test func nothingIsReportedBeforeStartOrFromATimerAlone() {
        var replay = R(.general)
        #expect(replay.handle(.settleTimerFired) == [])
        #expect(replay.handle(.interfaceClassified(index: 3, name: "veth0", kind: .ethernet)) == [])
        _ = replay.handle(.started)
        #expect(replay.handle(.started) == [])  // a second start asks for nothing
    }

    @Test func linkDownIsOneReportAfterTheTableIsDumpedAgain() {
        var replay = R(.general)
        #expect(replay.startAndClassify().last == .report(.reachable(.ethernet)))
        #expect(replay.change(to: RecordedNetlink.linkDown) == settles(RecordedNetlink.linkDown))
        #expect(replay.handle(.settleTimerFired) == [R.send(.addresses, 4), R.send(.routes, 5), .report(.notReachable)])
    }

    @Test func linkUpAloneStaysUnreachableBecauseTheKernelFlushedTheDefaultRoute() {
        // The IPv4 default route went with the link, without an RTM_DELROUTE: only the dump
        // after the change shows it gone. A table kept from notifications would say reachable.
        var replay = R(.general)
        _ = replay.startAndClassify()
        _ = replay.change(to: RecordedNetlink.linkDown)
        _ = replay.handle(.settleTimerFired)
        _ = replay.change(to: RecordedNetlink.linkUp)
        #expect(replay.handle(.settleTimerFired) == [R.send(.addresses, 6), R.send(.routes, 7)])
        #expect(replay.machine.reported == .notReachable)
        _ = replay.change(to: RecordedNetlink.defaultsRestored)
        #expect(replay.handle(.settleTimerFired) == [R.send(.addresses, 8), R.send(.routes, 9), .report(.reachable(.ethernet))])
    }

    @Test func linkUpAndDefaultRouteWithinOneSettleAreOneReport() {
        var replay = R(.general)
        _ = replay.startAndClassify()
        _ = replay.change(to: RecordedNetlink.linkDown)
        _ = replay.handle(.settleTimerFired)
        _ = replay.change(to: RecordedNetlink.linkUp)
        _ = replay.change(to: RecordedNetlink.defaultsRestored)
        #expect(replay.handle(.settleTimerFired) == [R.send(.addresses, 6), R.send(.routes, 7), .report(.reachable(.ethernet))])
    }

    @Test func aFlapWithinOneSettleIsNoReportAtAll() {
        var replay = R(.general)
        _ = replay.startAndClassify()
        _ = replay.change(to: RecordedNetlink.ipv4DefaultDeleted)
        _ = replay.change(to: RecordedNetlink.ipv6DefaultDeleted)
        _ = replay.change(to: RecordedNetlink.defaultsAdded)
        #expect(replay.handle(.settleTimerFired) == [R.send(.addresses, 4), R.send(.routes, 5)])
    }

    @Test func theIPv6DefaultRouteKeepsTheGeneralManagerReachable() {
        var replay = R(.general)
        _ = replay.startAndClassify()
        // A route change needs no dump: the kernel announces route removals it is asked for.
        #expect(replay.change(to: RecordedNetlink.ipv4DefaultDeleted) == [R.settle])
        #expect(replay.handle(.settleTimerFired) == [])
        #expect(replay.change(to: RecordedNetlink.ipv6DefaultDeleted) == [R.settle])
        #expect(replay.handle(.settleTimerFired) == [.report(.notReachable)])
        _ = replay.change(to: RecordedNetlink.defaultsAdded)
        #expect(replay.handle(.settleTimerFired) == [R.send(.addresses, 4), R.send(.routes, 5), .report(.reachable(.ethernet))])
    }

    @Test func carrierLossAndItsReturnAreOneReportEach() {
        var replay = R(.general)
        _ = replay.startAndClassify()
        #expect(replay.change(to: RecordedNetlink.carrierLost) == settles(RecordedNetlink.carrierLost))
        #expect(replay.handle(.settleTimerFired) == [R.send(.addresses, 4), R.send(.routes, 5), .report(.notReachable)])
        _ = replay.change(to: RecordedNetlink.carrierBack)
        #expect(replay.handle(.settleTimerFired) == [R.send(.addresses, 6), R.send(.routes, 7), .report(.reachable(.ethernet))])
    }

    @Test func removingTheAddressDropsItsRoutesSilentlyAndTheDumpSeesIt() {
        var replay = R(.general)
        _ = replay.startAndClassify()
        let isIPv4Default = { (route: NetlinkRoute) in route.family == Netlink.Family.inet && route.destinationLength == 0 && route.table == Netlink.Table.main }
        _ = replay.change(to: RecordedNetlink.addressRemoved)
        // No RTM_DELROUTE came for the default route via 192.0.2.254 ...
        #expect(replay.machine.table.routes.values.contains(where: isIPv4Default))
        // ... and the settled dump removed it; IPv6's default route still serves.
        #expect(replay.handle(.settleTimerFired) == [R.send(.addresses, 4), R.send(.routes, 5)])
        #expect(!replay.machine.table.routes.values.contains(where: isIPv4Default))
        #expect(replay.machine.reported == .reachable(.ethernet))
    }
}
