import Testing
@testable import UVFetchCore

/// The per-host look-ahead of a paced run, with made-up times: no clock, no queue.
@Suite(.tags(.unit)) struct HostTurnsTests {
    /// Takes every URL due at `now`, each ending at once (a paced host has one out at a time).
    /// `host` names an element's host: its letters, by default ("a2" is host "a").
    private func drain(_ turns: inout HostTurns<String>, at now: UInt64,
                       host: (String) -> String = { String($0.prefix { $0.isLetter }) }) -> [String] {
        var out: [String] = []
        while let next = turns.next(at: now) {
            out.append(next)
            turns.ended(host(next), at: now)
        }
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
        #expect(drain(&turns, at: 0) { "h" + $0.dropFirst() }.count == 1000)
        #expect(turns.hostCount == 1000)
        // Remembered only for their interval.
        turns.add("late", host: "h5")
        #expect(drain(&turns, at: 100) { _ in "h5" } == ["late"])
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
        turns.ended("a", at: 0)
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

    /// A host with a Crawl-delay has one URL out at a time, and its next turn counts from when
    /// that one ended: a request that waited (for a connection, a DNS answer) cannot reach the
    /// server together with the next one. One never requested (robots.txt disallowed it) ends
    /// without a wait; a Retry-After that outlasts the interval wins.
    @Test func aCrawlDelaysNextTurnCountsFromWhenItsURLEnded() {
        var turns = HostTurns<String>(interval: 0, capacity: 100)
        turns.setInterval(100, for: "a")
        turns.setInterval(100, for: "b")
        for index in 1...4 { turns.add("a\(index)", host: "a") }
        turns.add("b1", host: "b")
        #expect(turns.next(at: 0) == "a1")
        #expect(turns.next(at: 0) == "b1")
        // a1 still out: nothing of "a", however late.
        #expect(turns.next(at: 1_000) == nil)
        turns.ended("a", at: 1_000)
        #expect(turns.nextTurn == 1_100)
        #expect(turns.next(at: 1_099) == nil)
        #expect(turns.next(at: 1_100) == "a2")
        turns.ended("a", at: 1_150, spaced: false)
        #expect(turns.next(at: 1_150) == "a3")
        turns.hold("a", until: 5_000)
        turns.ended("a", at: 1_200)
        #expect(turns.next(at: 4_999) == nil)
        #expect(turns.next(at: 5_000) == "a4")
        // b1 ends late: its host's next turn counts from then; ending it again changes nothing.
        turns.ended("b", at: 5_000)
        turns.ended("b", at: 9_000)
        turns.add("b2", host: "b")
        #expect(turns.next(at: 5_099) == nil)
        #expect(turns.next(at: 5_100) == "b2")
        // The run's interval spaces starts: the next URL need not wait for the last to end.
        var run = HostTurns<String>(interval: 100, capacity: 100)
        for index in 1...2 { run.add("c\(index)", host: "c") }
        #expect(run.next(at: 0) == "c1")
        #expect(run.next(at: 100) == "c2")
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
            var heldUntil: [String: UInt64] = [:]
            var blocked: Set<String> = []
            var intervals: [String: UInt64] = [:]
            /// URLs out of hosts with a Crawl-delay, and when each one's last ended; when the
            /// others' last started.
            var out: [String: Int] = [:]
            var lastEnded: [String: UInt64] = [:]
            var lastHanded: [String: UInt64] = [:]
            var serial = 0
            for _ in 0..<300 {
                let host = "h\(random.next() % 4)"
                switch random.next() % 9 {
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
                case 5:
                    // Some of the URLs out end.
                    for (host, _) in out where random.next() % 2 == 0 {
                        turns.ended(host, at: now)
                        lastEnded[host] = now
                        out[host] = nil
                    }
                default:
                    now += random.next() % 10
                    while let next = turns.next(at: now) {
                        let owner = added.first { $0.value.contains(next) }!.key
                        #expect(!blocked.contains(owner))
                        #expect(now >= heldUntil[owner] ?? 0)
                        if let own = intervals[owner], own > 0 {
                            #expect(out[owner] == nil, "one URL of a host with a Crawl-delay out at a time")
                            if let last = lastEnded[owner] { #expect(now >= last + own) }
                            out[owner] = next
                        } else if let last = lastHanded[owner] {
                            #expect(now >= last + (intervals[owner] ?? 5))
                        }
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
                for (host, _) in out { turns.ended(host, at: now) }
                out = [:]
                guard let next = turns.next(at: now) else {
                    if turns.isEmpty { break }
                    continue
                }
                let owner = added.first { $0.value.contains(next) }!.key
                if let own = intervals[owner], own > 0 { out[owner] = next }
                handed[owner, default: []].append(next)
            }
            #expect(handed == added)
            #expect(turns.count == 0)
        }
    }
}
