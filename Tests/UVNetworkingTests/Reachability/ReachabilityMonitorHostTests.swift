import Testing
@testable import UVNetworking

/// Managers for a host name: resolved once, re-resolved after a network change only when the
/// last answer gave nothing, one question at a time.
@Suite(.tags(.unit)) struct ReachabilityMonitorHostTests {
    typealias R = MonitorReplay

    private func address(_ host: String) -> SocketAddress { SocketAddress(numericHost: host, port: 0)! }

    @Test func theFirstReadingWaitsForTheAnswer() {
        var replay = R(.host("service.test"))
        let start = replay.startAndClassify()
        #expect(start.first == .resolve(host: "service.test"))
        #expect(!start.contains { if case .report = $0 { true } else { false } })
        #expect(replay.handle(.resolved([address("198.51.100.7"), address("192.0.2.77")])) == [.report(.reachable(.ethernet))])
    }

    @Test func failureAndEmptyAnswersAreNotReachable() {
        var failed = R(.host("service.test"))
        _ = failed.startAndClassify()
        #expect(failed.handle(.resolutionFailed) == [.report(.notReachable)])
        var empty = R(.host("service.test"))
        _ = empty.startAndClassify()
        #expect(empty.handle(.resolved([])) == [.report(.notReachable)])
        var blackholed = R(.host("service.test"))
        _ = blackholed.startAndClassify()
        #expect(blackholed.handle(.resolved([address("198.51.100.7")])) == [.report(.notReachable)])
    }

    @Test func aFailedAnswerIsAskedAgainAfterASettledChangeOnlyOnceAtATime() {
        var replay = R(.host("service.test"))
        _ = replay.startAndClassify()
        _ = replay.handle(.resolutionFailed)
        _ = replay.change(to: RecordedNetlink.ipv4DefaultDeleted)
        #expect(replay.handle(.settleTimerFired) == [.resolve(host: "service.test")])
        _ = replay.change(to: RecordedNetlink.ipv6DefaultDeleted)
        #expect(replay.handle(.settleTimerFired) == [])  // the question is still out
        _ = replay.change(to: RecordedNetlink.defaultsAdded)
        #expect(replay.handle(.settleTimerFired) == [R.send(.addresses, 4), R.send(.routes, 5)])
        #expect(replay.handle(.resolved([address("2001:db8:1::9")])) == [.report(.reachable(.ethernet))])
    }

    /// An answer that arrives while a dump round is in flight waits for the round's end: the
    /// decision is made once, on the whole table.
    @Test func anAnswerDuringADumpRoundWaitsForItsEnd() {
        var replay = R(.host("service.test"))
        _ = replay.startAndClassify()
        _ = replay.change(to: RecordedNetlink.linkDown)
        let fired = replay.machine.handle(.settleTimerFired)
        #expect(fired == [R.send(.addresses, 4)])
        #expect(replay.machine.handle(.resolved([address("192.0.2.77")])) == [])
        var actions: [ReachabilityMonitor.Action] = []
        for datagram in RecordedNetlink.linkDown.addresses {
            actions += replay.handle(.received(renumbered(datagram.hexBytes, sequence: 4)))
        }
        #expect(actions == [R.send(.routes, 5), .report(.notReachable)])
    }

    @Test func aGoodAnswerIsNotAskedAgain() {
        var replay = R(.host("service.test"))
        _ = replay.startAndClassify()
        _ = replay.handle(.resolved([address("192.0.2.77")]))
        _ = replay.change(to: RecordedNetlink.linkDown)
        #expect(replay.handle(.settleTimerFired) == [R.send(.addresses, 4), R.send(.routes, 5), .report(.notReachable)])
    }

    @Test func aStartWithoutChangeDoesNotAskAgain() {
        var replay = R(.host("service.test"))
        let start = replay.handle(.started)
        _ = replay.handle(.resolutionFailed)
        #expect(start.filter { $0 == .resolve(host: "service.test") }.count == 1)
        #expect(replay.handle(.interfaceClassified(index: 3, name: "veth0", kind: .ethernet)) == [])
    }
}
