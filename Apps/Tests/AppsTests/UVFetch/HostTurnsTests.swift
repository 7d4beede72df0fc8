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

    /// A Retry-After: the host's URLs wait until the hold ends, others go on; the URL put back
    /// goes first.
    @Test func aHeldHostWaitsAndItsPutBackURLGoesFirst() {
        var turns = HostTurns<String>(interval: 0, capacity: 100)
        turns.add("a1", host: "a")
        turns.add("a2", host: "a")
        turns.add("b1", host: "b")
        #expect(turns.next(at: 0) == "a1")
        turns.hold("a", until: 500)
        turns.addFirst("a1 again", host: "a")
        #expect(drain(&turns, at: 10) == ["b1"])
        #expect(turns.nextTurn == 500)
        #expect(drain(&turns, at: 499).isEmpty)
        #expect(drain(&turns, at: 500) == ["a1 again", "a2"])
        #expect(turns.isEmpty)
    }

    /// A hold of a host not seen yet keeps its first URL back too; a shorter hold than the
    /// one in force changes nothing.
    @Test func holdsOnUnknownHostsAndHoldsThatEndSooner() {
        var turns = HostTurns<String>(interval: 10, capacity: 100)
        turns.hold("a", until: 300)
        turns.hold("a", until: 100)
        turns.add("a1", host: "a")
        #expect(drain(&turns, at: 200).isEmpty)
        #expect(drain(&turns, at: 300) == ["a1"])
        // Held past its interval: the hold wins over the spacing.
        turns.add("a2", host: "a")
        turns.hold("a", until: 1_000)
        #expect(drain(&turns, at: 310).isEmpty)
        #expect(drain(&turns, at: 1_000) == ["a2"])
    }

    /// robots.txt being fetched: nothing of the host goes until it is unblocked, and then
    /// with the interval it was given (a Crawl-delay).
    @Test func aBlockedHostWaitsForUnblockThenKeepsItsOwnInterval() {
        var turns = HostTurns<String>(interval: 0, capacity: 100)
        turns.block("a")
        for index in 1...3 { turns.add("a\(index)", host: "a") }
        turns.add("b1", host: "b")
        #expect(drain(&turns, at: 0) == ["b1"])
        // Nothing to wake for: the caller pumps when it unblocks.
        #expect(turns.nextTurn == nil || turns.nextTurn! > 0)
        turns.setInterval(100, for: "a")
        turns.unblock("a", at: 50)
        #expect(drain(&turns, at: 50) == ["a1"])
        #expect(drain(&turns, at: 149).isEmpty)
        #expect(drain(&turns, at: 150) == ["a2"])
        // Remembered with its interval while idle, so a later URL keeps the spacing.
        #expect(drain(&turns, at: 250) == ["a3"])
        #expect(drain(&turns, at: 400).isEmpty)
        #expect(turns.hostCount == 1)
        turns.add("a4", host: "a")
        #expect(drain(&turns, at: 400) == ["a4"])
        turns.add("a5", host: "a")
        #expect(drain(&turns, at: 450).isEmpty)
        #expect(drain(&turns, at: 500) == ["a5"])
        // Unblocking a host that is not blocked changes nothing.
        turns.unblock("b", at: 0)
        turns.add("b2", host: "b")
        #expect(drain(&turns, at: 500) == ["b2"])
    }

    /// Against a model: random adds, holds, blocks and time, every URL handed out exactly
    /// once, in order within its host, never while its host is held or blocked, and spaced by
    /// the host's interval.
    @Test func randomOperationsAgainstAModel() {
        var random = SplitMix64(seed: 37)
        for _ in 0..<200 {
            var turns = HostTurns<Int>(interval: 5, capacity: 10_000)
            var now: UInt64 = 0
            var added: [String: [Int]] = [:]
            var handed: [String: [Int]] = [:]
            var lastHanded: [String: UInt64] = [:]
            var heldUntil: [String: UInt64] = [:]
            var blocked: Set<String> = []
            var intervals: [String: UInt64] = [:]
            var serial = 0
            for _ in 0..<300 {
                let host = "h\(random.next() % 4)"
                switch random.next() % 8 {
                case 0, 1, 2:
                    serial += 1
                    turns.add(serial, host: host)
                    added[host, default: []].append(serial)
                case 3:
                    let until = now + random.next() % 40
                    turns.hold(host, until: until)
                    heldUntil[host] = max(heldUntil[host] ?? 0, until)
                case 4:
                    if blocked.contains(host) {
                        let interval = random.next() % 20
                        turns.setInterval(interval, for: host)
                        intervals[host] = interval
                        turns.unblock(host, at: now)
                        blocked.remove(host)
                    } else if handed[host] == nil {
                        turns.block(host)
                        blocked.insert(host)
                    }
                default:
                    now += random.next() % 10
                    while let next = turns.next(at: now) {
                        let owner = added.first { $0.value.contains(next) }!.key
                        #expect(!blocked.contains(owner))
                        #expect(now >= heldUntil[owner] ?? 0)
                        if let last = lastHanded[owner] { #expect(now >= last + (intervals[owner] ?? 5)) }
                        lastHanded[owner] = now
                        handed[owner, default: []].append(next)
                    }
                }
            }
            for host in blocked { turns.unblock(host, at: now) }
            now += 1_000
            // Bounded, so that a URL stuck for ever fails the test instead of hanging it.
            for _ in 0..<10_000 {
                now += 100
                guard let next = turns.next(at: now) else {
                    if turns.isEmpty { break }
                    continue
                }
                handed[added.first { $0.value.contains(next) }!.key, default: []].append(next)
            }
            #expect(handed == added)
            #expect(turns.count == 0)
        }
    }
}
