import Dispatch
import Foundation
import LoopbackDNSServer
import Synchronization
import Testing
@_spi(Testing) @testable import UVNetworking

/// The c-ares resolver against the scripted DNS server (`dnsServers`): what it answers, how it
/// fails, what it caches, and that slow names never hold fast ones back.
@Suite(.tags(.loopback), .serialized) struct DNSResolverServerTests {
    typealias Answer = Result<[SocketAddress], TransportError>

    /// A resolver on a loop of its own, asking `server`.
    final class Harness: @unchecked Sendable {
        let loop: EventLoop
        let server: LoopbackDNSServer
        private let resolver: LoopBound<DNSResolver>

        init(timeout: Double = .infinity, ttl: Double = 30, hostsFile: String = "/nonexistent/hosts", servers: [String]? = nil,
             resolvConf: String? = nil) throws {
            loop = try EventLoop(name: "test.loop.dns-server")
            server = try LoopbackDNSServer()
            var settings = DNSResolver.Settings(cacheTTLMilliseconds: LoopDuration.clamped(ttl), timeoutMilliseconds: LoopDuration.timeout(timeout),
                                                servers: servers ?? ["127.0.0.1:\(server.port)"], overrides: [:],
                                                hostsFile: HostsFileSource(path: hostsFile))
            if let resolvConf { settings.resolvConf = resolvConf }
            let made = settings
            let loop = self.loop
            let resolverBox = Mutex<LoopBound<DNSResolver>?>(nil)
            let done = DispatchSemaphore(value: 0)
            _ = loop.execute {
                resolverBox.withLock { $0 = LoopBound(DNSResolver(loop: loop, settings: made), loop: loop) }
                done.signal()
            }
            done.wait()
            resolver = resolverBox.withLock { $0! }
        }

        /// Starts look-ups of every name; `each` gets (name, answer) on the loop.
        func start(_ names: [String], port: Int = 80, each: @escaping @Sendable (String, Answer) -> Void) {
            let resolver = self.resolver
            _ = loop.execute {
                for name in names {
                    resolver.value.resolve(host: name, port: port) { answer in each(name, UncheckedAnswer(answer).answer) }
                }
            }
        }

        func resolve(_ name: String, port: Int = 80) -> Answer? {
            let result = Mutex<UncheckedAnswer?>(nil)
            let done = DispatchSemaphore(value: 0)
            start([name], port: port) { _, answer in
                result.withLock { $0 = UncheckedAnswer(answer) }
                done.signal()
            }
            guard done.wait(timeout: .now() + 20) == .success else { return nil }
            return result.withLock { $0?.answer }
        }

        /// Open handles on the loop (the resolver's polls and timers among them).
        var openHandles: Int { loop.openHandleCountFromOutside() }

        func close() {
            let resolver = self.resolver
            let done = DispatchSemaphore(value: 0)
            _ = loop.execute {
                resolver.value.close()
                done.signal()
            }
            done.wait()
            loop.shutdown()
            server.stop()
        }
    }

    struct UncheckedAnswer: @unchecked Sendable {
        let answer: Answer
        init(_ answer: Answer) { self.answer = answer }
    }

    private static func code(_ answer: Answer?) -> NetworkingError.Code? {
        guard case .failure(let error)? = answer else { return nil }
        return NetworkingError(error).code
    }

    @Test func returnsAAndAAAAIPv6First() throws {
        let harness = try Harness()
        defer { harness.close() }
        harness.server.set("both.test", .init(addresses: ["127.0.0.2", "::1"]))
        harness.server.set("four.test", .init(addresses: ["127.0.0.3", "127.0.0.4"]))
        let both = try #require(try harness.resolve("both.test", port: 8080)?.get())
        // RFC 6724 (c-ares sorts as glibc does): ::1 has the higher precedence.
        #expect(both.map(\.description) == ["[::1]:8080", "127.0.0.2:8080"])
        let four = try #require(try harness.resolve("FOUR.test")?.get())
        #expect(Set(four.map(\.description)) == ["127.0.0.3:80", "127.0.0.4:80"])
        // One A and one AAAA question per name.
        #expect(harness.server.queryCount(for: "both.test") == 2)
    }

    @Test func numericFormsAndInvalidNamesNeverReachTheServer() throws {
        let harness = try Harness()
        defer { harness.close() }
        let shorthand = try #require(try harness.resolve("127.1", port: 81)?.get())
        #expect(shorthand.map(\.description) == ["127.0.0.1:81"])
        #expect(Self.code(harness.resolve("nothing.invalid")) == .dnsFailure)
        #expect(harness.server.totalQueries == 0)
    }

    @Test func noSuchNameIsADNSFailureAndIsCachedBriefly() throws {
        let harness = try Harness()
        defer { harness.close() }
        harness.server.set("gone.test", .init(behavior: .nameError))
        #expect(Self.code(harness.resolve("gone.test")) == .dnsFailure)
        let asked = harness.server.queryCount(for: "gone.test")
        #expect(asked >= 1)
        #expect(Self.code(harness.resolve("gone.test")) == .dnsFailure)
        #expect(harness.server.queryCount(for: "gone.test") == asked)
        // Unlisted names are NXDOMAIN too; no data is "no address".
        harness.server.set("empty.test", .init(addresses: []))
        guard case .failure(.noAddresses)? = harness.resolve("empty.test") else {
            Issue.record("a name without records resolved")
            return
        }
    }

    @Test func serverFailureIsADNSFailureAndIsNotCached() throws {
        let harness = try Harness()
        defer { harness.close() }
        harness.server.set("broken.test", .init(behavior: .serverFailure))
        #expect(Self.code(harness.resolve("broken.test")) == .dnsFailure)
        let asked = harness.server.queryCount(for: "broken.test")
        #expect(Self.code(harness.resolve("broken.test")) == .dnsFailure)
        #expect(harness.server.queryCount(for: "broken.test") > asked)
    }

    @Test func silenceIsADNSTimeoutAndIsNotCached() throws {
        let harness = try Harness(timeout: 0.3)
        defer { harness.close() }
        harness.server.set("mute.test", .init(addresses: ["127.0.0.2"], behavior: .silent))
        #expect(Self.code(harness.resolve("mute.test")) == .dnsTimeout)
        let asked = harness.server.queryCount(for: "mute.test")
        #expect(Self.code(harness.resolve("mute.test")) == .dnsTimeout)
        #expect(harness.server.queryCount(for: "mute.test") > asked)
    }

    @Test func answersAreCachedForTheirTTL() throws {
        let harness = try Harness()
        defer { harness.close() }
        harness.server.set("kept.test", .init(addresses: ["127.0.0.2"], ttl: 300))
        harness.server.set("brief.test", .init(addresses: ["127.0.0.2"], ttl: 0))
        _ = try #require(try harness.resolve("kept.test")?.get())
        _ = try #require(try harness.resolve("kept.test")?.get())
        #expect(harness.server.queryCount(for: "kept.test") == 2)  // A and AAAA, once
        _ = try #require(try harness.resolve("brief.test")?.get())
        _ = try #require(try harness.resolve("brief.test")?.get())
        #expect(harness.server.queryCount(for: "brief.test") == 4)
    }

    @Test func concurrentLookUpsOfOneNameShareAQuery() throws {
        let harness = try Harness()
        defer { harness.close() }
        harness.server.set("shared.test", .init(addresses: ["127.0.0.2"], delay: 0.2))
        let answers = Mutex(0)
        let done = DispatchSemaphore(value: 0)
        harness.start(Array(repeating: "shared.test", count: 10)) { _, answer in
            if case .success = answer { answers.withLock { $0 += 1 } }
            done.signal()
        }
        for _ in 0..<10 { #expect(done.wait(timeout: .now() + 10) == .success) }
        #expect(answers.withLock { $0 } == 10)
        #expect(harness.server.queryCount(for: "shared.test") == 2)
    }

    /// The issue's case: 64 names whose answers are slow in front of 20 that answer at once. Every
    /// fast one is answered while every slow one is still outstanding.
    @Test func slowNamesDoNotHoldFastOnesBack() throws {
        let harness = try Harness()
        defer { harness.close() }
        let slow = (0..<64).map { "slow\($0).test" }
        let fast = (0..<20).map { "fast\($0).test" }
        for name in slow { harness.server.set(name, .init(addresses: ["127.0.0.2"], delay: 60)) }
        for name in fast { harness.server.set(name, .init(addresses: ["127.0.0.3"])) }
        struct Tally { var fastOK = 0; var fastFailed = 0; var slowDone = 0; var slowDoneWhenFastFinished: Int? }
        let tally = Mutex(Tally())
        let fastDone = DispatchSemaphore(value: 0)
        harness.start(slow + fast) { name, answer in
            tally.withLock { tally in
                if name.hasPrefix("slow") {
                    tally.slowDone += 1
                    return
                }
                if case .success = answer { tally.fastOK += 1 } else { tally.fastFailed += 1 }
                if tally.fastOK + tally.fastFailed == fast.count {
                    tally.slowDoneWhenFastFinished = tally.slowDone
                    fastDone.signal()
                }
            }
        }
        #expect(fastDone.wait(timeout: .now() + 30) == .success)
        let seen = tally.withLock { $0 }
        #expect(seen.fastOK == 20)
        #expect(seen.slowDoneWhenFastFinished == 0)
    }

    @Test func theHostsFileWinsOverDNS() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dns-hosts-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let hosts = directory.appendingPathComponent("hosts")
        try "127.0.0.9 pinned.test\n".write(to: hosts, atomically: true, encoding: .utf8)
        let harness = try Harness(hostsFile: hosts.path)
        defer { harness.close() }
        harness.server.set("pinned.test", .init(addresses: ["127.0.0.2"]))
        let answer = try #require(try harness.resolve("pinned.test")?.get())
        #expect(answer.map(\.description) == ["127.0.0.9:80"])
        #expect(harness.server.queryCount(for: "pinned.test") == 0)
    }

    /// A changed resolv.conf gets a new channel within a few seconds, as glibc rereads it; the
    /// search list says which name a short one becomes.
    @Test func aChangedResolvConfIsReadAgain() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dns-rc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let resolvConf = directory.appendingPathComponent("resolv.conf")
        try "nameserver 127.0.0.1\nsearch first.test\n".write(to: resolvConf, atomically: true, encoding: .utf8)
        let harness = try Harness(resolvConf: resolvConf.path)
        defer { harness.close() }
        harness.server.set("short.first.test", .init(addresses: ["127.0.0.2"], ttl: 0))
        harness.server.set("short.second.test", .init(addresses: ["127.0.0.3"], ttl: 0))
        #expect(try harness.resolve("short")?.get().map(\.description) == ["127.0.0.2:80"])
        try "nameserver 127.0.0.1\nsearch second.test\n".write(to: resolvConf, atomically: true, encoding: .utf8)
        let switched = waitUntil(timeout: 15) {
            usleep(100_000)
            return (try? harness.resolve("short")?.get().map(\.description)) == ["127.0.0.3:80"]
        }
        #expect(switched)
        #expect(harness.openHandles == 0)
    }

    @Test func anInvalidServerEntryFailsTheLookUpNamingIt() throws {
        let harness = try Harness(servers: ["127.0.0.1", "dns.test"])
        defer { harness.close() }
        guard case .failure(let error)? = harness.resolve("any.test") else {
            Issue.record("resolved with an invalid server list")
            return
        }
        let mapped = NetworkingError(error)
        #expect(mapped.code == .dnsFailure)
        #expect(mapped.localizedDescription.contains("\"dns.test\""))
    }

    @Test func anInvalidServerEntryStillLetsTheHostsFileAnswer() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dns-hosts-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let hosts = directory.appendingPathComponent("hosts")
        try "127.0.0.9 pinned.test\n".write(to: hosts, atomically: true, encoding: .utf8)
        let harness = try Harness(hostsFile: hosts.path, servers: ["dns.test"])
        defer { harness.close() }
        // At setup (the first look-up), and once the channel has failed.
        for _ in 0..<2 {
            #expect(try harness.resolve("pinned.test")?.get().map(\.description) == ["127.0.0.9:80"])
            guard case .failure(.invalidDNSServer)? = harness.resolve("any.test") else {
                Issue.record("a name the hosts file lacks resolved with an invalid server list")
                return
            }
        }
    }

    @Test func anIdleResolverHoldsNoHandleAndClosingFailsWhatIsInFlight() throws {
        let harness = try Harness()
        harness.server.set("a.test", .init(addresses: ["127.0.0.2"]))
        harness.server.set("mute.test", .init(behavior: .silent))
        _ = try #require(try harness.resolve("a.test")?.get())
        #expect(harness.openHandles == 0)
        let failed = DispatchSemaphore(value: 0)
        harness.start(["mute.test"]) { _, answer in
            if case .failure = answer { failed.signal() }
        }
        while harness.server.queryCount(for: "mute.test") == 0 { usleep(1_000) }
        #expect(harness.openHandles > 0)
        harness.close()
        #expect(failed.wait(timeout: .now() + 5) == .success)
    }
}
