import Testing
@testable import UVNetworking

/// RFC 8305's race replayed as event sequences, without sockets.
@Suite(.tags(.loopback)) struct HappyEyeballsTests {
    private static func addresses(_ hosts: String...) -> [SocketAddress] {
        hosts.map { SocketAddress(numericHost: $0, port: 80)! }
    }

    // MARK: Order (RFC 8305 §4)

    @Test func familiesInterleaveIPv6First() {
        let given = Self.addresses("127.0.0.1", "127.0.0.2", "::1", "::2")
        #expect(HappyEyeballs.order(given) == Self.addresses("::1", "127.0.0.1", "::2", "127.0.0.2"))
    }

    @Test func theLongerFamilyFinishesTheList() {
        let given = Self.addresses("::1", "::2", "::3", "127.0.0.1")
        #expect(HappyEyeballs.order(given) == Self.addresses("::1", "127.0.0.1", "::2", "::3"))
        let v4Heavy = Self.addresses("127.0.0.1", "127.0.0.2", "127.0.0.3", "::1")
        #expect(HappyEyeballs.order(v4Heavy) == Self.addresses("::1", "127.0.0.1", "127.0.0.2", "127.0.0.3"))
    }

    @Test func oneFamilyKeepsTheResolversOrder() {
        let v4 = Self.addresses("127.0.0.3", "127.0.0.1", "127.0.0.2")
        #expect(HappyEyeballs.order(v4) == v4)
        let v6 = Self.addresses("::2", "::1")
        #expect(HappyEyeballs.order(v6) == v6)
        #expect(HappyEyeballs.order(Self.addresses("::1")) == Self.addresses("::1"))
    }

    // MARK: One address

    @Test func oneAddressStartsWithoutADelayTimer() {
        var race = HappyEyeballs(addressCount: 1)
        #expect(race.start() == .start(index: 0, armDelay: false))
        #expect(race.attemptConnected(0) == .succeed(index: 0, losers: []))
        #expect(race.isFinished)
    }

    @Test func oneAddressFailingFailsTheRace() {
        var race = HappyEyeballs(addressCount: 1)
        _ = race.start()
        #expect(race.attemptFailed(0, status: -111) == .fail(status: -111))
        #expect(race.isFinished)
    }

    @Test func startIsOnce() {
        var race = HappyEyeballs(addressCount: 2)
        #expect(race.start() == .start(index: 0, armDelay: true))
        #expect(race.start() == .none)
    }

    // MARK: Two addresses

    @Test func theSecondAddressStartsWhenTheDelayElapses() {
        var race = HappyEyeballs(addressCount: 2)
        #expect(race.start() == .start(index: 0, armDelay: true))
        #expect(race.delayElapsed() == .start(index: 1, armDelay: false))
        #expect(race.attempts == [.connecting, .connecting])
        // A stray firing with nothing left to start does nothing.
        #expect(race.delayElapsed() == .none)
    }

    @Test func theFirstToConnectWinsAndTheOthersClose() {
        var race = HappyEyeballs(addressCount: 2)
        _ = race.start()
        _ = race.delayElapsed()
        #expect(race.attemptConnected(1) == .succeed(index: 1, losers: [0]))
        #expect(race.attempts == [.closed, .won])
        // The loser's late answer, and any other event, changes nothing.
        #expect(race.attemptConnected(0) == .none)
        #expect(race.attemptFailed(0, status: -111) == .none)
        #expect(race.delayElapsed() == .none)
        #expect(race.abandon() == [])
    }

    @Test func aConnectBeforeTheDelayNeverStartsTheSecond() {
        var race = HappyEyeballs(addressCount: 2)
        _ = race.start()
        #expect(race.attemptConnected(0) == .succeed(index: 0, losers: []))
        #expect(race.attempts == [.won, .notStarted])
        #expect(race.delayElapsed() == .none)
    }

    @Test func aFailureStartsTheNextAtOnce() {
        var race = HappyEyeballs(addressCount: 3)
        _ = race.start()
        #expect(race.attemptFailed(0, status: -111) == .start(index: 1, armDelay: true))
        #expect(race.attemptFailed(1, status: -113) == .start(index: 2, armDelay: false))
        #expect(race.attemptFailed(2, status: -101) == .fail(status: -101))
    }

    @Test func aFailureWhileOthersRunStartsTheNextBesideThem() {
        var race = HappyEyeballs(addressCount: 3)
        _ = race.start()
        #expect(race.delayElapsed() == .start(index: 1, armDelay: true))
        #expect(race.attemptFailed(1, status: -111) == .start(index: 2, armDelay: false))
        #expect(race.attempts == [.connecting, .failed, .connecting])
        #expect(race.attemptConnected(0) == .succeed(index: 0, losers: [2]))
    }

    @Test func theRaceFailsOnlyOnceEveryAttemptHas() {
        var race = HappyEyeballs(addressCount: 2)
        _ = race.start()
        _ = race.delayElapsed()
        #expect(race.attemptFailed(1, status: -111) == .none)
        #expect(!race.isFinished)
        #expect(race.attemptFailed(0, status: -110) == .fail(status: -110))
    }

    @Test func theLastFailureIsReported() {
        var race = HappyEyeballs(addressCount: 2)
        _ = race.start()
        _ = race.delayElapsed()
        #expect(race.attemptFailed(0, status: -110) == .none)
        #expect(race.attemptFailed(1, status: -111) == .fail(status: -111))
    }

    @Test func eventsForAttemptsNotConnectingAreIgnored() {
        var race = HappyEyeballs(addressCount: 3)
        _ = race.start()
        #expect(race.attemptConnected(2) == .none)
        #expect(race.attemptFailed(1, status: -111) == .none)
        _ = race.attemptFailed(0, status: -111)
        #expect(race.attemptFailed(0, status: -111) == .none)
        #expect(race.attemptConnected(0) == .none)
        #expect(race.attempts == [.failed, .connecting, .notStarted])
    }

    // MARK: Abandoning (connect timeout, close)

    @Test func abandonNamesTheAttemptsStillConnecting() {
        var race = HappyEyeballs(addressCount: 4)
        _ = race.start()
        _ = race.delayElapsed()
        _ = race.attemptFailed(1, status: -111)
        #expect(race.abandon() == [0, 2])
        #expect(race.isFinished)
        #expect(race.attempts == [.closed, .failed, .closed, .notStarted])
        #expect(race.delayElapsed() == .none)
        #expect(race.attemptConnected(0) == .none)
        #expect(race.abandon() == [])
    }

    @Test func abandonBeforeStartClosesNothing() {
        var race = HappyEyeballs(addressCount: 2)
        #expect(race.abandon() == [])
        #expect(race.start() == .none)
    }

    // MARK: Every sequence

    /// Every order of events over three addresses, up to a depth: the race starts addresses in
    /// order, once each; reports exactly one outcome (a winner that was connecting, with every
    /// other connecting attempt as a loser; or the last failure once none is left), and nothing
    /// after it; and never leaves an attempt unaccounted for.
    @Test func everyEventSequenceKeepsTheRules() {
        enum Event: CaseIterable { case delay, connect0, connect1, connect2, fail0, fail1, fail2, abandon }
        var checked = 0
        func explore(_ race: HappyEyeballs, started: Int, lastStatus: Int32?, outcome: Bool, depth: Int) {
            checked += 1
            guard depth > 0 else { return }
            for event in Event.allCases {
                var next = race
                let before = race.attempts
                var status = lastStatus
                var action: HappyEyeballs.Action
                switch event {
                case .delay: action = next.delayElapsed()
                case .connect0, .connect1, .connect2:
                    let index = event == .connect0 ? 0 : event == .connect1 ? 1 : 2
                    action = next.attemptConnected(index)
                case .fail0, .fail1, .fail2:
                    let index = event == .fail0 ? 0 : event == .fail1 ? 1 : 2
                    let code = Int32(-100 - depth * 3 - index)
                    if before[index] == .connecting { status = code }
                    action = next.attemptFailed(index, status: code)
                case .abandon:
                    let closed = next.abandon()
                    #expect(closed == before.indices.filter { !race.isFinished && before[$0] == .connecting })
                    action = .none
                }
                var newlyStarted = started
                switch action {
                case .none:
                    break
                case .start(let index, let armDelay):
                    #expect(!outcome)
                    #expect(index == started, "addresses start in order, once each")
                    #expect(before[index] == .notStarted)
                    #expect(armDelay == (index + 1 < before.count))
                    newlyStarted += 1
                case .succeed(let index, let losers):
                    #expect(!outcome)
                    #expect(before[index] == .connecting)
                    #expect(losers == before.indices.filter { $0 != index && before[$0] == .connecting })
                    #expect(next.isFinished)
                case .fail(let failure):
                    #expect(!outcome)
                    #expect(failure == status)
                    #expect(!before.contains(.notStarted))
                    #expect(!next.attempts.contains(.connecting))
                    #expect(next.isFinished)
                }
                if race.isFinished { #expect(action == .none && next.attempts == before) }
                if !next.isFinished {
                    // A live race always has something that can still happen.
                    #expect(next.attempts.contains(.connecting), "a live race waits on an attempt")
                }
                let ended = outcome || next.isFinished
                explore(next, started: newlyStarted, lastStatus: status, outcome: ended, depth: depth - 1)
            }
        }
        var race = HappyEyeballs(addressCount: 3)
        #expect(race.start() == .start(index: 0, armDelay: true))
        explore(race, started: 1, lastStatus: nil, outcome: false, depth: 6)
        #expect(checked > 250_000)
    }
}
