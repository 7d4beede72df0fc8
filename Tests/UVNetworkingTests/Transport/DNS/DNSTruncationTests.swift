import Dispatch
import Foundation
import LoopbackDNSServer
import Synchronization
import Testing
@_spi(Testing) @testable import UVNetworking

/// Issue #34: a name whose UDP answer is truncated (TC) while the server refuses TCP, as behind a
/// firewall that lets only UDP/53 through. c-ares 1.18 retries that name over TCP, and a refused
/// connection used to reset every query to the server until their tries ran out: one such name
/// failed every look-up in flight ("Could not contact DNS servers"). It must fail that name alone.
@Suite(.tags(.loopback), .serialized) struct DNSTruncationTests {
    typealias Harness = DNSResolverServerTests.Harness
    typealias Answer = DNSResolverServerTests.Answer

    /// What a round of concurrent look-ups came to.
    struct Round {
        var resolved: Set<String> = []
        var failed: [String: TransportError] = [:]
        var count: Int { resolved.count + failed.count }
    }

    /// Starts every name at once and waits for all their answers.
    private func resolveTogether(_ names: [String], on harness: Harness) -> Round {
        let round = Mutex(Round())
        let done = DispatchSemaphore(value: 0)
        harness.start(names) { name, answer in
            let finished = round.withLock { round -> Bool in
                switch answer {
                case .success: round.resolved.insert(name)
                case .failure(let error): round.failed[name] = error
                }
                return round.count == names.count
            }
            if finished { done.signal() }
        }
        #expect(done.wait(timeout: .now() + 30) == .success, "not every look-up ended")
        return round.withLock { $0 }
    }

    /// The 20 good names resolved and the truncated one failed, with its own error.
    private func expectOnlyTheTruncatedNameFailed(_ round: Round, good: [String], truncated: String) {
        #expect(round.resolved == Set(good), "failed: \(round.failed.mapValues { NetworkingError($0).localizedDescription })")
        guard let error = round.failed[truncated] else {
            Issue.record("\(truncated) did not fail")
            return
        }
        guard case .truncatedAnswerTCPRefused(let host) = error else {
            Issue.record("\(truncated) failed with \(error), not truncatedAnswerTCPRefused")
            return
        }
        #expect(host == truncated)
        let mapped = NetworkingError(error)
        #expect(mapped.code == .dnsFailure)
        #expect(mapped.localizedDescription.contains(truncated), "\(mapped.localizedDescription)")
    }

    /// Two rounds: the first meets the refused TCP connection, the second starts while the
    /// refusal is remembered (the truncated name's cached failure is not reused: it is asked again).
    private func checkTwoRounds(on harness: Harness) {
        harness.server.set("big.test", .init(behavior: .truncated))
        for round in 0..<2 {
            let good = (0..<20).map { "good\(round)-\($0).test" }
            // Still in flight when the TCP connection is refused, as over a real network: answered
            // at once, on loopback, they would all be in before the refusal and prove nothing.
            for name in good { harness.server.set(name, .init(addresses: ["127.0.0.2", "::1"], delay: 0.3)) }
            let asked = harness.server.queryCount(for: "big.test")
            let seen = resolveTogether(good + ["big.test"], on: harness)
            expectOnlyTheTruncatedNameFailed(seen, good: good, truncated: "big.test")
            #expect(harness.server.queryCount(for: "big.test") > asked)
        }
    }

    /// The issue's case, with c-ares's default tries.
    @Test func aTruncatedAnswerWhoseTCPRetryIsRefusedFailsThatNameAlone() throws {
        let harness = try Harness()
        defer { harness.close() }
        checkTwoRounds(on: harness)
    }

    /// resolv.conf's `attempts:1`: c-ares gives every query one try, so the look-ups the refused
    /// connection reset had none left; they must still be answered.
    @Test func withOneAttemptTheOtherLookUpsStillResolve() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dns-tc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let resolvConf = directory.appendingPathComponent("resolv.conf")
        try "nameserver 127.0.0.1\noptions attempts:1 timeout:2\n".write(to: resolvConf, atomically: true, encoding: .utf8)
        let harness = try Harness(resolvConf: resolvConf.path)
        defer { harness.close() }
        checkTwoRounds(on: harness)
    }
}
