import Dispatch
import Foundation
import Glibc
import LoopbackHTTPServer
import Synchronization
import Testing
@_spi(Testing) @testable import UVNetworking

extension EndToEnd {
    /// Many distinct origins: the connection budget across them, connects that find no
    /// descriptor, and pools dropped once empty. Origins are 127.0.x.y addresses on one port:
    /// Linux routes all of 127/8 to lo, so one `LoopbackHTTPServer` on 0.0.0.0 answers on each,
    /// and it never closes an idle connection first.
    @Suite(.tags(.childProcess)) struct ManyOrigins {
        /// The server on 0.0.0.0, started before the harness so its descriptors are part of the
        /// harness's baseline.
        static func server() throws -> (LoopbackHTTPServer, Int) { try ManyOriginsServer.start() }

        /// The n-th distinct origin (n from 0), all on `port`.
        static func origin(_ n: Int, port: Int) -> String { ManyOriginsServer.origin(n, port: port) }

        /// Asks the manager's engine on its loop.
        static func onEngine<T: Sendable>(_ manager: SessionManager, _ body: @escaping @Sendable (SessionEngine) -> T) -> T {
            let result = Mutex<T?>(nil)
            let done = DispatchSemaphore(value: 0)
            let engine = LoopBound(manager.engine!, loop: manager.loop)
            _ = manager.loop.execute {
                result.withLock { $0 = body(engine.value) }
                done.signal()
            }
            done.wait()
            return result.withLock { $0! }
        }

        /// Runs every URL at once and returns the failures (nil for a hang).
        static func fetchAll(_ harness: ClientHarness, _ urls: [String], within seconds: Double = 60) -> [String]? {
            let waits = urls.map { url in
                let (task, wait) = harness.makeTask(ClientHarness.request(url))
                task.resume()
                return (url, wait)
            }
            var failures: [String] = []
            for (url, wait) in waits {
                guard let outcome = wait(seconds) else { return nil }
                if outcome.error != nil || outcome.status != 200 { failures.append("\(url): \(String(describing: outcome.error))") }
            }
            return failures
        }

        @Test func aBudgetAcrossOriginsIsNeverExceededAndEveryTaskSucceeds() throws {
            let (server, port) = try Self.server()
            let harness = ClientHarness { configuration in
                configuration.maximumConnections = 8
                configuration.maximumConnectionsPerHost = 4
            }
            // 40 origins, three requests each, all at once: 8 connections must carry them.
            let urls = (0..<120).map { Self.origin($0 % 40, port: port) + "/items/\($0)" }
            let failures = try #require(Self.fetchAll(harness, urls))
            #expect(failures.isEmpty, "\(failures.prefix(5))")
            let peak = Self.onEngine(harness.manager) { $0.peakConnectionCount }
            #expect(peak <= 8)
            #expect(peak > 0)
            #expect(harness.manager.openConnectionCount <= 8)
            // A second round finds idle connections of other origins in its way: they give way.
            let again = try #require(Self.fetchAll(harness, (40..<80).map { Self.origin($0, port: port) + "/items/1" }))
            #expect(again.isEmpty, "\(again.prefix(5))")
            #expect(Self.onEngine(harness.manager) { $0.peakConnectionCount } <= 8)
            server.stop()
            harness.finish()
        }

        @Test func aBudgetOverTwoLoopsIsNeverExceededAcrossThemAndEveryTaskSucceeds() throws {
            // Each loop's engine holds its share of the budget (3 and 2 of 5): the connections
            // open across both never exceed it.
            let (server, port) = try Self.server()
            let group = try EventLoopGroup(loopCount: 2, name: "test.many-origins.group")
            defer { group.shutdown() }
            let harness = ClientHarness({ configuration in
                configuration.maximumConnections = 5
                configuration.maximumConnectionsPerHost = 2
            }, makeManager: { SessionManager(configuration: $0, group: group) })
            let urls = (0..<120).map { Self.origin($0 % 40, port: port) + "/items/\($0)" }
            let failures = try #require(Self.fetchAll(harness, urls))
            #expect(failures.isEmpty, "\(failures.prefix(5))")
            let peaks = harness.manager.fromEachEngine { $0.peakConnectionCount }.map { $0 ?? 0 }
            #expect(peaks.reduce(0, +) <= 5, "\(peaks)")
            // Both loops carried origins.
            #expect(peaks.allSatisfy { $0 > 0 }, "\(peaks)")
            #expect(harness.manager.openConnectionCount <= 5)
            server.stop()
            harness.finish()
        }

        @Test func oneConnectionServesOriginsInTurn() throws {
            let (server, port) = try Self.server()
            let harness = ClientHarness { $0.maximumConnections = 1 }
            let failures = try #require(Self.fetchAll(harness, (0..<12).map { Self.origin($0, port: port) + "/items/1" }))
            #expect(failures.isEmpty, "\(failures.prefix(5))")
            #expect(Self.onEngine(harness.manager) { $0.peakConnectionCount } == 1)
            server.stop()
            harness.finish()
        }

        @Test func aRequestThatGivesUpWhileWaitingForTheBudgetLeavesNoUnitBehind() throws {
            // One unit, held by a slow exchange; a request to another origin waits for it and
            // times out. The unit its pool is granted later is not needed and goes round: a
            // third origin still gets it.
            let (server, port) = try Self.server()
            let answered = DispatchSemaphore(value: 0)
            let slow = try ScriptedServer { connection in
                _ = try connection.readRequest()
                _ = answered.wait(timeout: .now() + 10)
                try connection.write(ScriptedResponse.text("slow"))
                _ = connection.waitForPeerClose(timeout: 5)
            }
            let harness = ClientHarness { $0.maximumConnections = 1 }
            let (first, waitFirst) = harness.makeTask(ClientHarness.request("http://127.0.0.1:\(slow.port)/"))
            first.resume()
            let waiting = harness.fetch(ClientHarness.request(Self.origin(1, port: port) + "/items/1", timeout: 0.2))
            #expect((waiting.error as? NetworkingError)?.code == .requestTimeout, "\(String(describing: waiting.error))")
            answered.signal()
            #expect(waitFirst(10)?.text == "slow")
            #expect(harness.fetch(Self.origin(2, port: port) + "/items/2").status == 200)
            #expect(Self.onEngine(harness.manager) { $0.peakConnectionCount } == 1)
            slow.stop()
            server.stop()
            harness.finish()
        }

        @Test func emptyPoolsAreDroppedAfterTheIdleTimeout() throws {
            let (server, port) = try Self.server()
            let harness = ClientHarness { $0.idleConnectionTimeout = 0.05 }
            let urls = (0..<300).map { Self.origin($0, port: port) + "/items/1" }
            for batch in stride(from: 0, to: urls.count, by: 50) {
                let failures = try #require(Self.fetchAll(harness, Array(urls[batch..<batch + 50])))
                #expect(failures.isEmpty, "\(failures.prefix(5))")
            }
            #expect(Self.onEngine(harness.manager) { $0.poolCount } > 0)
            // Connections close after 50 ms idle, their pools 50 ms after that.
            let dropped = waitUntil(timeout: 20) { Self.onEngine(harness.manager) { $0.poolCount } == 0 }
            #expect(dropped, "pools left: \(Self.onEngine(harness.manager) { $0.poolCount })")
            // An origin used again after its pool was dropped gets a new one.
            #expect(harness.fetch(Self.origin(0, port: port) + "/items/2").status == 200)
            server.stop()
            harness.finish()
        }

        @Test func pacedPoolsAreDroppedOnceTheirPacerHasNothingToRemember() throws {
            let (server, port) = try Self.server()
            let harness = ClientHarness { configuration in
                configuration.idleConnectionTimeout = 0.02
                configuration.delayPerHost = 0.3
            }
            let urls = (0..<6).map { Self.origin($0 % 3, port: port) + "/items/\($0)" }
            let failures = try #require(Self.fetchAll(harness, urls))
            #expect(failures.isEmpty, "\(failures.prefix(3))")
            #expect(waitUntil(timeout: 20) { Self.onEngine(harness.manager) { $0.poolCount } == 0 })
            // Used again after the drop: paced and served as before.
            let again = try #require(Self.fetchAll(harness, Array(urls.prefix(2))))
            #expect(again.isEmpty, "\(again.prefix(3))")
            server.stop()
            harness.finish()
        }

        @Test func memoryStaysFlatOverTwentyThousandOrigins() throws {
            let (server, port) = try Self.server()
            let harness = ClientHarness { $0.idleConnectionTimeout = 0.01 }
            func run(_ range: Range<Int>) throws {
                for batch in stride(from: range.lowerBound, to: range.upperBound, by: 200) {
                    let urls = (batch..<min(batch + 200, range.upperBound)).map { Self.origin($0, port: port) + "/items/1" }
                    let failures = try #require(Self.fetchAll(harness, urls))
                    #expect(failures.isEmpty, "\(failures.prefix(3))")
                }
                #expect(waitUntil(timeout: 30) { Self.onEngine(harness.manager) { $0.poolCount } == 0 })
            }
            // The first thousand origins warm up allocator arenas and table capacities.
            try run(0..<1_000)
            let before = try #require(residentBytes())
            try run(1_000..<21_000)
            let after = try #require(residentBytes())
            // Pools never freed cost about a kilobyte per origin (20 MB here); allow a quarter.
            #expect(after - before < 5 << 20, "resident memory grew by \((after - before) >> 10) KiB over 20,000 origins")
            server.stop()
            harness.finish()
        }

        /// Resident memory of this process in bytes (VmRSS).
        private func residentBytes() -> Int? {
            guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
                  let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
                  let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
            else { return nil }
            return kilobytes * 1024
        }

        @Test func aLookUpWithNoDescriptorAndNothingToCloseFailsNamingTheLimit() throws {
            let result = try EmbedProbe.run("resolve-without-descriptors")
            #expect(result.succeeded, "\(result)")
        }

        @Test func aConnectWithNoDescriptorAndNothingToCloseFailsNamingTheLimit() throws {
            let result = try EmbedProbe.run("connect-without-descriptors")
            #expect(result.succeeded, "\(result)")
        }
    }
}
