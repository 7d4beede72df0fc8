import Foundation
import LoopbackHTTPServer
import Testing
@testable import UVNetworking

extension EndToEnd {
    /// Happy Eyeballs against loopback: a host answered with ::1 and 127.0.0.1 (an override with
    /// two addresses), where ::1 blackholes (a full accept queue drops SYNs), refuses or serves.
    @Suite(.tags(.loopback)) struct HappyEyeballsRaceTests {
        private static let host = "eyeballs.test"

        /// A harness whose `host` resolves to `addresses`.
        private func harness(_ addresses: String = "::1, 127.0.0.1", connectTimeout: Double = 5,
                             tls: Bool = false, _ configure: @escaping (inout SessionConfiguration) -> Void = { _ in }) -> ClientHarness {
            let setUp: (inout SessionConfiguration) -> Void = {
                $0.connectTimeout = connectTimeout
                $0.hostAddressOverrides[Self.host] = addresses
                configure(&$0)
            }
            return tls ? tlsHarness(setUp) : ClientHarness(setUp)
        }

        private func textServer(ipv6: Bool = false, port: Int = 0, _ text: String) throws -> ScriptedServer {
            try ScriptedServer(ipv6: ipv6, port: port) { connection in
                try connection.serveKeepAlive { _ in ScriptedResponse.text(text) }
            }
        }

        /// The remote address of the task's only exchange.
        private func fetchRemote(_ harness: ClientHarness, _ url: String) async throws -> (text: String, remote: String?) {
            let response = try await harness.manager.data(for: Request(url: URL(string: url)!))
            let transaction = try #require(response.metrics?.transactions.last)
            return (String(decoding: response.data, as: UTF8.self), transaction.remoteAddress)
        }

        @Test func aBlackholedIPv6AddressFallsBackToIPv4() async throws {
            let server = try textServer("over IPv4")
            defer { server.stop() }
            let blackhole = try BlackholeListener(ipv6: true, port: server.port)
            defer { blackhole.close() }
            let harness = harness()
            defer { harness.finish() }
            let (text, remote) = try await fetchRemote(harness, "http://\(Self.host):\(server.port)/")
            #expect(text == "over IPv4")
            #expect(remote == "127.0.0.1")
        }

        /// The control for the test above: ::1 alone does blackhole.
        @Test func theBlackholeAloneTimesOut() throws {
            let server = try textServer("over IPv4")
            defer { server.stop() }
            let blackhole = try BlackholeListener(ipv6: true, port: server.port)
            defer { blackhole.close() }
            let harness = harness("::1", connectTimeout: 0.5)
            defer { harness.finish() }
            #expect(harness.fetch("http://\(Self.host):\(server.port)/").code == .connectTimeout)
        }

        @Test func aRefusingIPv6AddressGivesWayToIPv4() async throws {
            // Nothing listens on [::1]:port.
            let server = try textServer("over IPv4")
            defer { server.stop() }
            let harness = harness()
            defer { harness.finish() }
            let (text, remote) = try await fetchRemote(harness, "http://\(Self.host):\(server.port)/")
            #expect(text == "over IPv4")
            #expect(remote == "127.0.0.1")
        }

        @Test func whenBothServeIPv6Wins() async throws {
            let v4 = try textServer("over IPv4")
            defer { v4.stop() }
            let v6 = try textServer(ipv6: true, port: v4.port, "over IPv6")
            defer { v6.stop() }
            // Listed IPv4 first: the race still starts with IPv6.
            let harness = harness("127.0.0.1, ::1")
            defer { harness.finish() }
            let (text, remote) = try await fetchRemote(harness, "http://\(Self.host):\(v4.port)/")
            #expect(text == "over IPv6")
            #expect(remote == "::1")
        }

        @Test func whenEveryAddressRefusesTheLastFailureIsReported() throws {
            let port = try ScriptedServer { _ in }.port  // stopped at once by deinit: nothing listens now
            let harness = harness("::1, 127.0.0.1, 127.0.0.2")
            defer { harness.finish() }
            let outcome = harness.fetch("http://\(Self.host):\(port)/")
            #expect(outcome.code == .connectionRefused)
            #expect((outcome.error as? NetworkingError)?.failingURL?.absoluteString == "http://\(Self.host):\(port)/")
        }

        @Test func whenEveryAddressBlackholesTheConnectTimeoutEndsTheRace() throws {
            let v4 = try BlackholeListener()
            defer { v4.close() }
            let v6 = try BlackholeListener(ipv6: true, port: v4.port)
            defer { v6.close() }
            // Longer than the attempt delay, so that both attempts run when it fires.
            let harness = harness(connectTimeout: 1)
            defer { harness.finish() }
            #expect(harness.fetch("http://\(Self.host):\(v4.port)/").code == .connectTimeout)
        }

        /// Cancelled while both attempts hang: the task completes once, and closing the session
        /// closes both sockets and the race's timer (`finish` counts descriptors and handles).
        @Test func cancellingMidRaceClosesEveryAttempt() throws {
            let v4 = try BlackholeListener()
            defer { v4.close() }
            let v6 = try BlackholeListener(ipv6: true, port: v4.port)
            defer { v6.close() }
            let harness = harness(connectTimeout: 30)
            let (task, wait) = harness.makeTask(ClientHarness.request("http://\(Self.host):\(v4.port)/"))
            let before = openFileDescriptorCount()
            task.resume()
            // Both families are being tried: two more sockets.
            #expect(waitUntil(timeout: 5) { openFileDescriptorCount() >= before + 2 })
            task.cancel()
            let outcome = wait(5)
            #expect(outcome?.code == .cancelled)
            #expect(outcome?.calls == 1)
            harness.finish()
        }

        @Test func httpsRunsOverTheWinner() async throws {
            let pki = TestPKI.standard
            let server = try ScriptedServer { connection in
                let tls = try ScriptedTLS(connection, chain: pki.sentChain, key: pki.leaf.key)
                try tls.handshake()
                _ = try tls.readRequestHead()
                try tls.write(ScriptedResponse.text("over TLS over IPv4"))
                _ = connection.waitForPeerClose(timeout: 10)
            }
            defer { server.stop() }
            let blackhole = try BlackholeListener(ipv6: true, port: server.port)
            defer { blackhole.close() }
            // The certificate names localhost: the override gives it both addresses.
            let harness = harness(tls: true) { $0.hostAddressOverrides["localhost"] = "::1, 127.0.0.1" }
            defer { harness.finish() }
            let response = try await harness.manager.data(for: Request(url: URL(string: "https://localhost:\(server.port)/")!))
            #expect(String(decoding: response.data, as: UTF8.self) == "over TLS over IPv4")
            let transaction = try #require(response.metrics?.transactions.last)
            #expect(transaction.remoteAddress == "127.0.0.1")
            #expect(transaction.secureConnectionEndDate != nil)
        }

        /// Through a proxy, the proxy's addresses race.
        @Test func aProxyNameRacesItsAddresses() async throws {
            let proxy = try textServer("from the proxy")
            defer { proxy.stop() }
            let blackhole = try BlackholeListener(ipv6: true, port: proxy.port)
            defer { blackhole.close() }
            let harness = harness { $0.proxy = ProxyConfiguration(httpProxy: URL(string: "http://\(Self.host):\(proxy.port)")) }
            defer { harness.finish() }
            let (text, remote) = try await fetchRemote(harness, "http://origin.test/")
            #expect(text == "from the proxy")
            #expect(remote == "127.0.0.1")
        }
    }
}
