import Dispatch
import Foundation
import MetricsTestKit
import Synchronization
import Testing
@testable import UVNetworking

extension EndToEnd {
    /// The HTTP/2 driver against nghttpd, a server no one here wrote: h2c by prior knowledge on
    /// http, ALPN on https, many streams on one connection, bodies both ways.
    @Suite(.tags(.nginx)) struct HTTP2PeerTests {
        private func h2c(_ configure: (inout SessionConfiguration) -> Void = { _ in }) -> ClientHarness {
            ClientHarness {
                $0.httpVersion = .http2PriorKnowledge
                configure(&$0)
            }
        }

        @Test func getOverH2CByPriorKnowledge() throws {
            let server = try TestServers.nghttpd()
            let harness = h2c()
            defer { harness.finish() }
            let outcome = harness.fetch(server.url("/hello.txt").absoluteString)
            #expect(outcome.error == nil)
            #expect(outcome.status == 200)
            #expect(outcome.text == "hello over h2\n")
        }

        @Test func aLargeBodyArrivesWhole() throws {
            let server = try TestServers.nghttpd()
            let expected = try Data(contentsOf: URL(fileURLWithPath: server.directory + "/1MiB.bin"))
            let harness = h2c()
            defer { harness.finish() }
            let outcome = harness.fetch(server.url("/1MiB.bin").absoluteString)
            #expect(outcome.status == 200)
            #expect(outcome.data == expected)
        }

        @Test func aPostBodyIsEchoed() throws {
            let server = try TestServers.nghttpd()
            let harness = h2c()
            defer { harness.finish() }
            let body = String(repeating: "uvnetworking ", count: 10_000)
            let outcome = harness.fetch(server.url("/echo").absoluteString, method: .post, body: body)
            #expect(outcome.status == 200)
            #expect(outcome.text == body)
        }

        /// nghttpd allows 100 concurrent streams: 100 requests take one connection, the 101st
        /// opens a second, whatever the per-host limit allows.
        @Test(arguments: [(100, 1), (150, 2)])
        func concurrentRequestsShareAConnectionUntilItsStreamsRunOut(requests: Int, connections: Int) throws {
            let server = try TestServers.nghttpd()
            let harness = h2c { $0.maximumConnectionsPerHost = 8 }
            defer { harness.finish() }
            let tasks = (0..<requests).map { _ in harness.makeTask(ClientHarness.request(server.url("/hello.txt").absoluteString)) }
            for task in tasks { task.task.resume() }
            for task in tasks {
                let outcome = task.wait(30)
                #expect(outcome?.status == 200)
                #expect(outcome?.text == "hello over h2\n")
            }
            #expect(harness.manager.openConnectionCount == connections)
        }

        @Test func httpsNegotiatesH2ThroughALPN() throws {
            let server = try TestServers.nghttpdTLS()
            let harness = ClientHarness {
                $0.tls.trustsSystemCAs = false
                $0.tls.additionalTrustedCAFiles = [TestPKI.standard.rootPEMPath]
            }
            defer { harness.finish() }
            let outcome = harness.fetch(server.url("/hello.txt").absoluteString)
            #expect(outcome.error == nil)
            #expect(outcome.status == 200)
            #expect(outcome.text == "hello over h2\n")
        }

        @Test func cancellingOneStreamLeavesTheConnectionToTheOthers() throws {
            let server = try TestServers.nghttpd()
            let harness = h2c()
            defer { harness.finish() }
            let first = harness.fetch(server.url("/hello.txt").absoluteString)
            #expect(first.status == 200)
            let cancelled = harness.makeTask(ClientHarness.request(server.url("/1MiB.bin").absoluteString))
            cancelled.task.resume()
            cancelled.task.cancel()
            #expect(cancelled.wait(10)?.code == .cancelled)
            let after = harness.fetch(server.url("/hello.txt").absoluteString)
            #expect(after.status == 200)
            #expect(harness.manager.openConnectionCount == 1)
        }

        /// nghttp2's freed blocks stay with the connection while it is busy and go back once it
        /// has been idle a while, so that thousands of idle connections keep none.
        @Test func anIdleConnectionGivesBackNghttp2sMemory() throws {
            let server = try TestServers.nghttpd()
            let harness = h2c()
            defer { harness.finish() }
            let tasks = (0..<16).map { _ in harness.makeTask(ClientHarness.request(server.url("/hello.txt").absoluteString)) }
            for task in tasks { task.task.resume() }
            #expect(tasks.allSatisfy { $0.wait(10)?.status == 200 })
            let cached = { harness.manager.fromEachEngine { $0.http2CachedBytes }.compactMap { $0 }.reduce(0, +) }
            #expect(cached() > 0, "a connection that just ran streams keeps their blocks")
            let delay = Double(HTTP2Connection.trimDelayMilliseconds) / 1000
            #expect(waitUntil(timeout: delay + 5) { cached() == 0 })
            #expect(harness.manager.openConnectionCount == 1)
        }

        @Test func http1OnlySessionsNeverSpeakH2() throws {
            // nghttpd over TLS speaks only h2: a session restricted to HTTP/1.1 cannot agree.
            let server = try TestServers.nghttpdTLS()
            let harness = ClientHarness {
                $0.httpVersion = .http1_1
                $0.tls.trustsSystemCAs = false
                $0.tls.additionalTrustedCAFiles = [TestPKI.standard.rootPEMPath]
            }
            defer { harness.finish() }
            let outcome = harness.fetch(server.url("/hello.txt").absoluteString)
            #expect(outcome.status != 200)
            #expect(outcome.error != nil)
        }
    }
}

extension EndToEnd {
    /// nginx ends every h2c connection after 100 streams with GOAWAY: no request is lost, the
    /// ones above its last stream go to the next connection.
    @Suite(.tags(.nginx)) struct HTTP2NginxGoAwayTests {
        @Test func tenThousandGETsThroughAGoAwayEveryHundredStreamsAllSucceed() throws {
            let server = try TestServers.nginxH2()
            let harness = ClientHarness {
                $0.httpVersion = .http2PriorKnowledge
                $0.maximumConnectionsPerHost = 4
            }
            defer { harness.finish() }
            // H2_GOAWAY_GETS=100000 measures the goal; the suite runs 10,000.
            let total = ProcessInfo.processInfo.environment["H2_GOAWAY_GETS"].flatMap(Int.init) ?? 10_000, window = 300
            let failures = Mutex<[String]>([])
            let done = DispatchSemaphore(value: 0)
            let started = Mutex(0)
            let url = URL(string: server.url("/hello"))!
            // `window` requests in flight at a time, each completion starting the next.
            @Sendable func startNext() {
                let next = started.withLock { count -> Int? in
                    guard count < total else { return nil }
                    count += 1
                    return count
                }
                guard next != nil else { return }
                harness.manager.dataTask(with: Request(url: url, timeoutInterval: 30), completionHandler: { response, object, error in
                    if let error {
                        failures.withLock { $0.append("\(error)") }
                    } else if response?.status.code != 200 || (object as? Data).map({ String(decoding: $0, as: UTF8.self) }) != "hello world\n" {
                        failures.withLock { $0.append("status \(response?.status.code ?? 0)") }
                    }
                    done.signal()
                    startNext()
                }).resume()
            }
            for _ in 0..<window { startNext() }
            for _ in 0..<total { #expect(done.wait(timeout: .now() + 60) == .success) }
            let seen = failures.withLock { $0 }
            #expect(seen.isEmpty, "\(seen.count) failed, e.g. \(seen.prefix(3))")
        }
    }
}

extension EndToEnd.HTTP2PeerTests {
    /// A captured HTTP/2 exchange is kept in HTTP/1.1 form, named "h2", as archives want it.
    @Test func aCapturedExchangeIsKeptInHTTP11Form() throws {
        let server = try TestServers.nghttpd()
        let harness = ClientHarness { $0.httpVersion = .http2PriorKnowledge }
        defer { harness.finish() }
        let capture = WireCapture()
        var request = ClientHarness.request(server.url("/hello.txt").absoluteString)
        request.wireCapture = capture
        let outcome = harness.fetch(request)
        #expect(outcome.status == 200)
        let exchange = try #require(capture.exchanges.first)
        #expect(exchange.protocolName == "h2")
        let requestText = String(decoding: exchange.request, as: UTF8.self)
        #expect(requestText.hasPrefix("GET /hello.txt HTTP/1.1\r\n"))
        let responseText = String(decoding: exchange.response, as: UTF8.self)
        #expect(responseText.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(responseText.hasSuffix("\r\n\r\nhello over h2\n"))
        #expect(exchange.isComplete)
    }
}

extension EndToEnd.HTTP2PeerTests {
    /// A body nobody reads stops its own stream (its window stays shut), never the connection:
    /// other requests on the same connection go on, and the body is whole once read.
    @Test func aConsumerThatStopsStopsOnlyItsStream() async throws {
        let server = try TestServers.nghttpd()
        let harness = ClientHarness { $0.httpVersion = .http2PriorKnowledge }
        defer { harness.finish() }
        let (response, stream) = try await harness.manager.bytes(for: ClientHarness.request(server.url("/zeros-32MiB.bin").absoluteString))
        #expect(response.status.code == 200)
        // Let the window fill while nobody reads.
        try await Task.sleep(for: .milliseconds(300))
        let others = (0..<20).map { _ in harness.makeTask(ClientHarness.request(server.url("/hello.txt").absoluteString, timeout: 5)) }
        for other in others { other.task.resume() }
        for other in others { #expect(other.wait(10)?.status == 200) }
        #expect(harness.manager.openConnectionCount == 1)
        var total = 0
        for try await chunk in stream { total += chunk.count }
        #expect(total == 32 << 20)
    }
}

extension EndToEnd {
    /// nginx's `listen ... ssl http2`: the same https origin speaks h2 to a session that offers
    /// it through ALPN and HTTP/1.1 to one restricted to it, and the transaction metrics name
    /// what was spoken.
    @Suite(.tags(.nginx)) struct HTTP2NginxTLSTests {
        private func harness(_ version: HTTPVersionPolicy) -> ClientHarness {
            ClientHarness {
                $0.httpVersion = version
                $0.tls.trustsSystemCAs = false
                $0.tls.additionalTrustedCAFiles = [TestPKI.standard.rootPEMPath]
            }
        }

        @Test(arguments: [(HTTPVersionPolicy.http2, "h2"), (.http1_1, "http/1.1")])
        func alpnPicksTheProtocolTheSessionAllows(_ version: HTTPVersionPolicy, _ spoken: String) async throws {
            let server = try TestServers.nginxH2()
            let harness = harness(version)
            defer { harness.finish() }
            let request = Request(url: URL(string: server.tlsURL("/hello"))!)
            for index in 0..<3 {
                let response = try await harness.manager.data(for: request)
                #expect(response.response.status.code == 200)
                #expect(response.data == Data("hello world\n".utf8))
                let transaction = try #require(response.metrics?.transactions.first)
                #expect(transaction.networkProtocolName == spoken)
                #expect(transaction.isReusedConnection == (index > 0), "one connection carries them all")
            }
        }

        /// Once the origin has answered with h2, twenty at once share its one TLS connection
        /// (nginx allows 128 streams). (Before any answer, a burst may open several: ALPN could
        /// still say HTTP/1.1.)
        @Test func concurrentRequestsShareOneTLSConnection() throws {
            let server = try TestServers.nginxH2()
            let harness = harness(.http2)
            defer { harness.finish() }
            #expect(harness.fetch(server.tlsURL("/hello")).status == 200)
            let tasks = (0..<20).map { _ in harness.makeTask(ClientHarness.request(server.tlsURL("/hello"), timeout: 20)) }
            for task in tasks { task.task.resume() }
            for task in tasks { #expect(task.wait(30)?.text == "hello world\n") }
            #expect(harness.manager.openConnectionCount == 1)
        }
    }
}

extension EndToEnd.HTTP2PeerTests {
    /// A task names the protocol its response came over without collecting metrics.
    @Test func aTaskNamesItsProtocol() throws {
        let server = try TestServers.nghttpd()
        let harness = ClientHarness { $0.httpVersion = .http2PriorKnowledge }
        defer { harness.finish() }
        let h2 = harness.makeTask(ClientHarness.request(server.url("/hello.txt").absoluteString))
        #expect(h2.task.networkProtocolName == nil, "no response yet")
        h2.task.resume()
        #expect(h2.wait(10)?.status == 200)
        #expect(h2.task.networkProtocolName == "h2")
    }

    /// Plain http without prior knowledge speaks HTTP/1.1, and the task says so.
    @Test func aTaskOverHTTP11NamesItsProtocol() throws {
        let nginx = try TestServers.nginx()
        let plain = ClientHarness()
        defer { plain.finish() }
        let http1 = plain.makeTask(ClientHarness.request(nginx.baseURL + "/hello"))
        http1.task.resume()
        #expect(http1.wait(10)?.status == 200)
        #expect(http1.task.networkProtocolName == "http/1.1")
    }
}

extension EndToEnd.HTTP2PeerTests {
    /// swift-metrics keeps HTTP/2 apart from HTTP/1.1: `http.client.request.duration` carries
    /// OpenTelemetry's `network.protocol.version`, "2" here.
    @Test func requestDurationsNameTheProtocolVersion() throws {
        let server = try TestServers.nghttpd()
        let metrics = TestMetrics()
        let harness = ClientHarness {
            $0.httpVersion = .http2PriorKnowledge
            $0.metricsFactory = metrics
        }
        #expect(harness.fetch(server.url("/hello.txt").absoluteString).status == 200)
        harness.finish()
        let port = String(server.url("/").port!)
        let timer = try metrics.expectTimer("http.client.request.duration",
                                            [("http.request.method", "GET"), ("http.response.status_code", "200"),
                                             ("server.address", "127.0.0.1"), ("server.port", port), ("network.protocol.version", "2")])
        #expect(timer.values.count == 1)
    }
}

extension EndToEnd.HTTP2PeerTests {
    /// A connection keeps the header block of the last request it translated and reuses it for
    /// the same request bytes: requests that repeat, alternate and differ only in a field's
    /// value, on one connection, each arrive as sent (httpbin echoes the fields).
    @Test func alternatingRequestsOnOneConnectionArriveAsSent() throws {
        let base = try Wire.h2.httpbinBaseURL()
        let harness = Wire.h2.harness()
        defer { harness.finish() }
        let one = ClientHarness.request(base + "/headers", fields: [("X-Probe", "one")])
        let two = ClientHarness.request(base + "/headers", fields: [("X-Probe", "two")])
        for (request, probe) in [(one, "one"), (one, "one"), (two, "two"), (one, "one"), (two, "two"), (two, "two")] {
            let outcome = harness.fetch(request)
            #expect(outcome.status == 200)
            let echoed = outcome.data.flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
            #expect((echoed?["headers"] as? [String: Any])?["X-Probe"] as? String == probe)
        }
        #expect(harness.manager.openConnectionCount == 1)
    }
}
