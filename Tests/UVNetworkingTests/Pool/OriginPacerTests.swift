import Testing
@testable import UVNetworking

/// The per-origin pacer replayed as event sequences with made-up times: no sockets, no clock.
@Suite(.tags(.unit)) struct OriginPacerTests {
    @Test func intervalIsTheLargerOfDelayAndOneOverRate() {
        #expect(OriginPacer.interval(delay: 0, requestsPerSecond: nil) == nil)
        #expect(OriginPacer.interval(delay: -1, requestsPerSecond: 0) == nil)
        #expect(OriginPacer.interval(delay: .nan, requestsPerSecond: .infinity) == nil)
        #expect(OriginPacer.interval(delay: 0.25, requestsPerSecond: nil) == 250)
        #expect(OriginPacer.interval(delay: 0, requestsPerSecond: 4) == 250)
        #expect(OriginPacer.interval(delay: 0.5, requestsPerSecond: 4) == 500)
        #expect(OriginPacer.interval(delay: 0.1, requestsPerSecond: 2) == 500)
        // Rounded up: 3 per second never becomes slightly more than 3.
        #expect(OriginPacer.interval(delay: 0, requestsPerSecond: 3) == 334)
        #expect(OriginPacer.interval(delay: 0, requestsPerSecond: 1_000_000) == 1)
        #expect(OriginPacer.interval(delay: .infinity, requestsPerSecond: nil) == nil)
        #expect(OriginPacer.interval(delay: 1e300, requestsPerSecond: nil) == 365 * 86_400_000)
    }

    @Test func firstRequestStartsAtOnceTheNextWaitsForTheInterval() {
        var pacer = OriginPacer(interval: 100)
        #expect(pacer.requestArrived(1, at: 1000) == .release(1))
        #expect(pacer.requestStarted(1, at: 1000) == .none)
        #expect(pacer.requestArrived(2, at: 1030) == .armTimer(at: 1100))
        #expect(pacer.timerFired(at: 1100) == .release(2))
        #expect(pacer.requestStarted(2, at: 1100) == .none)
        // After a pause longer than the interval: at once, no catching up.
        #expect(pacer.requestArrived(3, at: 5000) == .release(3))
        #expect(pacer.requestStarted(3, at: 5000) == .none)
        #expect(pacer.requestArrived(4, at: 5000) == .armTimer(at: 5100))
    }

    @Test func burstLeavesOneIntervalApartInArrivalOrder() {
        var pacer = OriginPacer(interval: 50)
        var starts: [(Int, UInt64)] = []
        var timer: UInt64?
        func handle(_ action: OriginPacer.Action, at now: UInt64) {
            switch action {
            case .none: break
            case .armTimer(let at): timer = at
            case .release(let id):
                starts.append((id, now))
                // Handed a connection at once.
                handle(pacer.requestStarted(id, at: now), at: now)
            }
        }
        for id in 1...5 { handle(pacer.requestArrived(id, at: 0), at: 0) }
        #expect(pacer.heldCount == 4)
        while let at = timer {
            timer = nil
            handle(pacer.timerFired(at: at), at: at)
        }
        #expect(starts.map(\.0) == [1, 2, 3, 4, 5])
        #expect(starts.map(\.1) == [0, 50, 100, 150, 200])
        #expect(pacer.isIdle(at: 250))
        #expect(!pacer.isIdle(at: 249))
    }

    @Test func oneTimerArmingPerTurnNotPerArrival() {
        var pacer = OriginPacer(interval: 100)
        #expect(pacer.requestArrived(1, at: 0) == .release(1))
        // The released request has not started: later ones wait for its start, not a timer.
        #expect(pacer.requestArrived(2, at: 10) == .none)
        #expect(pacer.requestArrived(3, at: 20) == .none)
        #expect(pacer.requestStarted(1, at: 30) == .armTimer(at: 130))
        #expect(pacer.requestArrived(4, at: 40) == .none)
    }

    @Test func nextStartCountsFromTheRealStartNotTheRelease() {
        // Released at 0, but it waited for a busy connection until 400: the next one may leave
        // at 500, not at 100, so that two requests never go out back to back.
        var pacer = OriginPacer(interval: 100)
        #expect(pacer.requestArrived(1, at: 0) == .release(1))
        #expect(pacer.requestArrived(2, at: 0) == .none)
        #expect(pacer.timerFired(at: 100) == .none)
        #expect(pacer.requestStarted(1, at: 400) == .armTimer(at: 500))
        #expect(pacer.timerFired(at: 500) == .release(2))
    }

    @Test func earlyTimerFiringArmsAgain() {
        var pacer = OriginPacer(interval: 100)
        _ = pacer.requestArrived(1, at: 0)
        _ = pacer.requestStarted(1, at: 0)
        #expect(pacer.requestArrived(2, at: 0) == .armTimer(at: 100))
        #expect(pacer.timerFired(at: 99) == .armTimer(at: 100))
        #expect(pacer.timerFired(at: 100) == .release(2))
    }

    @Test func timerIsRearmedOnlyWhenItsTimeChanges() {
        var pacer = OriginPacer(interval: 100)
        _ = pacer.requestArrived(1, at: 0)
        _ = pacer.requestStarted(1, at: 0)
        #expect(pacer.requestArrived(2, at: 10) == .armTimer(at: 100))
        #expect(pacer.requestArrived(3, at: 20) == .none)
        #expect(pacer.timerFired(at: 100) == .release(2))
        #expect(pacer.requestStarted(2, at: 100) == .armTimer(at: 200))
        #expect(pacer.timerFired(at: 200) == .release(3))
        #expect(pacer.requestStarted(3, at: 200) == .none)
    }

    @Test func cancelledWaiterGivesUpItsTurn() {
        var pacer = OriginPacer(interval: 100)
        _ = pacer.requestArrived(1, at: 0)
        _ = pacer.requestStarted(1, at: 0)
        _ = pacer.requestArrived(2, at: 0)
        _ = pacer.requestArrived(3, at: 0)
        #expect(pacer.requestCancelled(2, at: 50) == .none)
        #expect(pacer.heldCount == 1)
        #expect(pacer.timerFired(at: 100) == .release(3))
        // Unknown or finished ones change nothing.
        #expect(pacer.requestCancelled(2, at: 120) == .none)
        #expect(pacer.requestStarted(2, at: 120) == .none)
    }

    @Test func cancelledLastWaiterLeavesNothingToRelease() {
        var pacer = OriginPacer(interval: 100)
        _ = pacer.requestArrived(1, at: 0)
        _ = pacer.requestStarted(1, at: 0)
        #expect(pacer.requestArrived(2, at: 0) == .armTimer(at: 100))
        _ = pacer.requestCancelled(2, at: 10)
        #expect(pacer.timerFired(at: 100) == .none)
        #expect(pacer.isIdle(at: 100))
    }

    @Test func releasedRequestThatGivesUpCountsAsAStart() {
        // It may have opened a connection to the origin: the next one keeps its distance.
        var pacer = OriginPacer(interval: 100)
        #expect(pacer.requestArrived(1, at: 0) == .release(1))
        #expect(pacer.requestArrived(2, at: 0) == .none)
        #expect(pacer.requestCancelled(1, at: 30) == .armTimer(at: 130))
        #expect(pacer.timerFired(at: 130) == .release(2))
    }

    @Test func eachPacerKeepsItsOwnOrigin() {
        // One pacer per origin: a busy one holds nothing of another back.
        var origins = (0..<100).map { _ in OriginPacer(interval: 1000) }
        for index in origins.indices {
            #expect(origins[index].requestArrived(1, at: 5) == .release(1))
            _ = origins[index].requestStarted(1, at: 5)
            #expect(origins[index].requestArrived(2, at: 5) == .armTimer(at: 1005))
        }
        var fresh = OriginPacer(interval: 1000)
        #expect(fresh.requestArrived(7, at: 6) == .release(7))
    }
}
