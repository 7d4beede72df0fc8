import Testing
@testable import UVNetworking

/// A network that never stops changing still gets a decision in bounded time: the settle timer
/// is re-armed a few times at most before one, and dump rounds spoiled by notifications give way
/// to a decision after a few rounds.
@Suite(.tags(.loopback)) struct ReachabilityMonitorSettleBoundTests {
    typealias R = MonitorReplay

    /// Twenty datagrams of changes in one quiet period arm the timer five times (500 ms after the
    /// first change at most), and the decision resets the count for the next change.
    @Test func aChattyNetworkArmsTheSettleTimerAFewTimesAtMost() {
        var replay = R(.general)
        _ = replay.startAndClassify()
        replay.answers = RecordedNetlink.linkDown
        let chatter = RecordedNetlink.linkDown.notificationDatagrams
        var arms = 0
        for _ in 0..<20 {
            for datagram in chatter { arms += replay.handle(.received(datagram)).filter { $0 == R.settle }.count }
        }
        #expect(arms == ReachabilityMonitor.maxSettleArms)
        #expect(replay.handle(.settleTimerFired).last == .report(.notReachable))
        replay.answers = RecordedNetlink.linkUp
        #expect(replay.handle(.received(RecordedNetlink.linkUp.notificationDatagrams[0])).contains(R.settle))
    }

    /// Every dump round is spoiled by a notification arriving before its answer: the machine
    /// still decides, after a bounded number of rounds.
    @Test func roundsSpoiledByNotificationsStillEndInADecision() {
        var replay = R(.general)
        _ = replay.startAndClassify()
        replay.answers = RecordedNetlink.linkDown
        let chatter = RecordedNetlink.linkDown.notificationDatagrams[0]
        var queue = replay.machine.handle(.received(chatter))
        var timerArmed = false
        var reports: [NetworkReachabilityStatus] = []
        var firings = 0
        while reports.isEmpty, firings < 50 {
            if queue.isEmpty {
                guard timerArmed else { break }
                timerArmed = false
                firings += 1
                queue = replay.machine.handle(.settleTimerFired)
                continue
            }
            switch queue.removeFirst() {
            case .send(let request):
                // The network changes again before the dump is answered.
                queue += replay.machine.handle(.received(chatter))
                for datagram in replay.answers.dump(R.kind(of: request)) {
                    queue += replay.machine.handle(.received(renumbered(datagram, sequence: R.sequence(of: request))))
                }
            case .armSettleTimer:
                timerArmed = true
            case .report(let status):
                reports.append(status)
            case .classify, .resolve:
                break
            }
        }
        #expect(reports == [.notReachable])
        #expect(firings <= ReachabilityMonitor.maxSettleArms)
    }
}
