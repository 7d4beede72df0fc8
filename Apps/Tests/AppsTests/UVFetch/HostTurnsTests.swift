import Testing
@testable import UVFetchCore

/// The per-host look-ahead of a paced run, with made-up times: no clock, no queue.
@Suite(.tags(.unit)) struct HostTurnsTests {
    /// Takes every URL due at `now`.
    private func drain(_ turns: inout HostTurns<String>, at now: UInt64) -> [String] {
        var out: [String] = []
        while let next = turns.next(at: now) { out.append(next) }
        return out
    }

    @Test func otherHostsGoWhileTheHeadsHostWaitsForItsTurn() {
        var turns = HostTurns<String>(interval: 100, capacity: 100)
        for index in 1...4 { turns.add("a\(index)", host: "a") }
        turns.add("b1", host: "b")
        turns.add("c1", host: "c")
        turns.add("b2", host: "b")
        #expect(drain(&turns, at: 0) == ["a1", "b1", "c1"])
        #expect(turns.nextTurn == 100)
        #expect(drain(&turns, at: 99).isEmpty)
        #expect(drain(&turns, at: 100) == ["a2", "b2"])
        #expect(drain(&turns, at: 150).isEmpty)
        #expect(drain(&turns, at: 230) == ["a3"])
        // Spacing counts from when a URL was handed out, not from when it was due.
        #expect(turns.nextTurn == 330)
        #expect(drain(&turns, at: 329).isEmpty)
        #expect(drain(&turns, at: 330) == ["a4"])
        #expect(turns.isEmpty)
        #expect(turns.nextTurn == nil)
    }

    @Test func aHostSeenAgainWithinItsIntervalWaits() {
        var turns = HostTurns<String>(interval: 100, capacity: 10)
        turns.add("a1", host: "a")
        #expect(drain(&turns, at: 0) == ["a1"])
        turns.add("a2", host: "a")
        #expect(drain(&turns, at: 50).isEmpty)
        #expect(turns.nextTurn == 100)
        #expect(drain(&turns, at: 100) == ["a2"])
    }

    @Test func hostsAreForgottenOnceTheirIntervalPassedWithNothingWaiting() {
        var turns = HostTurns<String>(interval: 100, capacity: 10_000)
        for index in 0..<1000 { turns.add("u\(index)", host: "h\(index)") }
        #expect(drain(&turns, at: 0).count == 1000)
        #expect(turns.hostCount == 1000)
        // Remembered only for their interval.
        turns.add("late", host: "h5")
        #expect(drain(&turns, at: 100) == ["late"])
        #expect(turns.hostCount == 1)
        #expect(drain(&turns, at: 200).isEmpty)
        #expect(turns.hostCount == 0)
    }

    @Test func capacityBoundsWhatIsSetAside() {
        var turns = HostTurns<String>(interval: 1000, capacity: 3)
        turns.add("a1", host: "a")
        turns.add("a2", host: "a")
        #expect(!turns.isFull)
        turns.add("a3", host: "a")
        #expect(turns.isFull)
        #expect(turns.next(at: 0) == "a1")
        #expect(!turns.isFull)
        #expect(turns.count == 2)
    }

    @Test func inputOrderWithinAHostAndTurnOrderAcrossHosts() {
        var turns = HostTurns<String>(interval: 10, capacity: 100)
        for round in 1...3 { for host in ["x", "y", "z"] { turns.add("\(host)\(round)", host: host) } }
        #expect(drain(&turns, at: 0) == ["x1", "y1", "z1"])
        #expect(drain(&turns, at: 10) == ["x2", "y2", "z2"])
        #expect(drain(&turns, at: 25) == ["x3", "y3", "z3"])
    }

    @Test func removeAllDropsTheWaitingButKeepsTheSpacing() {
        var turns = HostTurns<String>(interval: 100, capacity: 100)
        turns.add("a1", host: "a")
        turns.add("a2", host: "a")
        turns.add("b1", host: "b")
        #expect(turns.next(at: 0) == "a1")
        turns.removeAll()
        #expect(turns.isEmpty)
        #expect(turns.next(at: 0) == nil)
        turns.add("a3", host: "a")
        #expect(turns.next(at: 50) == nil)
        #expect(turns.next(at: 100) == "a3")
    }
}
