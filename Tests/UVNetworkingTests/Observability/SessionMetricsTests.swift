import CoreMetrics
import Foundation
import LoopbackHTTPServer
import MetricsTestKit
import Synchronization
import Testing
@testable import UVNetworking

/// swift-metrics with OpenTelemetry's HTTP client names, recorded by MetricsTestKit's factory
/// given to the session (no process-wide bootstrap).
@Suite(.tags(.loopback), .serialized) struct SessionMetricsTests {
    private func origin(_ port: Int) -> [(String, String)] { [("server.address", "127.0.0.1"), ("server.port", "\(port)")] }

    private func dimensions(_ dimensions: [(String, String)]) -> [String] { dimensions.map { "\($0.0)=\($0.1)" } }

    @Test func requestsConnectionsAndTheirDurations() throws {
        let server = LoopbackHTTPServer()
        let port = try server.start()
        defer { server.stop() }
        let metrics = TestMetrics()
        let harness = ClientHarness { $0.metricsFactory = metrics }
        #expect(harness.fetch("http://127.0.0.1:\(port)/items/1").status == 200)
        #expect(harness.fetch("http://127.0.0.1:\(port)/status/503").status == 503)
        #expect(harness.fetch("http://127.0.0.1:\(port)/items/2", method: .post, body: "x").status == 200)

        let ok = try metrics.expectTimer("http.client.request.duration",
                                         [("http.request.method", "GET"), ("http.response.status_code", "200")] + origin(port)
                                            + [("network.protocol.version", "1.1")])
        #expect(ok.values.count == 1 && ok.values[0] > 0)
        #expect(ok.displayUnit == .seconds)
        let failed = try metrics.expectTimer("http.client.request.duration",
                                             [("http.request.method", "GET"), ("http.response.status_code", "503")] + origin(port)
                                                + [("error.type", "503"), ("network.protocol.version", "1.1")])
        #expect(failed.values.count == 1 && failed.values[0] > 0)
        #expect(metrics.timers(label: "http.client.request.duration").count == 3)

        let active = try metrics.expectMeter("http.client.active_requests", [("http.request.method", "GET")] + origin(port))
        #expect(active.values == [1, 0, 1, 0], "raised while each request ran, back to 0")
        let activePOST = try metrics.expectMeter("http.client.active_requests", [("http.request.method", "POST")] + origin(port))
        #expect(activePOST.lastValue == 0)

        let busy = try metrics.expectMeter("http.client.open_connections", [("http.connection.state", "active")] + origin(port))
        let idle = try metrics.expectMeter("http.client.open_connections", [("http.connection.state", "idle")] + origin(port))
        #expect(busy.values == [1, 0, 1, 0, 1, 0], "one connection, active for each of the three requests")
        #expect(idle.values == [1, 0, 1, 0, 1], "idle between them")
        #expect(metrics.timers(label: "http.client.connection.duration").allSatisfy { $0.values.isEmpty }, "not closed yet")

        harness.finish()
        #expect(idle.lastValue == 0, "closed with the session")
        let lifetime = try metrics.expectTimer("http.client.connection.duration", origin(port))
        #expect(lifetime.values.count == 1 && lifetime.values[0] > 0)
        #expect(lifetime.displayUnit == .seconds)
    }

    @Test func aFailedRequestNamesItsErrorType() throws {
        let port = try TestServers.freeLoopbackPort()
        let metrics = TestMetrics()
        let harness = ClientHarness { $0.metricsFactory = metrics }
        let outcome = harness.fetch("http://127.0.0.1:\(port)/")
        let code = try #require(outcome.code)
        harness.finish()
        let timer = try metrics.expectTimer("http.client.request.duration",
                                            [("http.request.method", "GET")] + origin(port) + [("error.type", code.description)])
        #expect(timer.values.count == 1)
        #expect(try metrics.expectMeter("http.client.active_requests", [("http.request.method", "GET")] + origin(port)).lastValue == 0)
        #expect(metrics.meters(label: "http.client.open_connections").allSatisfy { ($0.lastValue ?? 0) == 0 },
                "a connection that never opened never counted")
    }

    /// The gauges come back to 0 whatever ends a request or a connection: an idle connection
    /// evicted for the connection budget, a task cancelled while it waits for the budget, one
    /// cancelled while it waits for its response, and the session's close. None goes below 0.
    @Test func theGaugesReturnToZeroAfterEvictionsCancelsAndTheClose() throws {
        let server = LoopbackHTTPServer()
        let port = try server.start()
        defer { server.stop() }
        let other = LoopbackHTTPServer()
        let otherPort = try other.start()
        defer { other.stop() }
        let arrived = Mutex(0)
        let silent = try ScriptedServer { connection in
            _ = try connection.readRequestHead()
            arrived.withLock { $0 += 1 }
            _ = connection.waitForPeerClose(timeout: 10)
        }
        defer { silent.stop() }
        let metrics = TestMetrics()
        let harness = ClientHarness {
            $0.metricsFactory = metrics
            $0.maximumConnections = 1
        }
        #expect(harness.fetch("http://127.0.0.1:\(port)/items/1").status == 200)
        // The budget's one unit: the first origin's idle connection gives way.
        #expect(harness.fetch("http://127.0.0.1:\(otherPort)/items/1").status == 200)
        let (held, waitHeld) = harness.makeTask(ClientHarness.request("http://127.0.0.1:\(silent.port)/slow"))
        held.resume()
        #expect(waitUntil(timeout: 5) { arrived.withLock { $0 } == 1 })
        // Waits for the budget, held by the silent connection, and is cancelled there.
        let (queued, waitQueued) = harness.makeTask(ClientHarness.request("http://127.0.0.1:\(port)/items/2"))
        queued.resume()
        queued.cancel()
        #expect(waitQueued(10)?.code == .cancelled)
        held.cancel()
        #expect(waitHeld(10)?.code == .cancelled)
        #expect(harness.fetch("http://127.0.0.1:\(port)/items/3").status == 200)
        harness.finish()

        let gauges = metrics.meters(label: "http.client.active_requests") + metrics.meters(label: "http.client.open_connections")
        #expect(gauges.count >= 7)
        for gauge in gauges {
            #expect(gauge.lastValue ?? 0 == 0, "\(gauge.label) \(dimensions(gauge.dimensions))")
            #expect(gauge.values.allSatisfy { $0 >= 0 }, "\(gauge.label) \(dimensions(gauge.dimensions)): \(gauge.values)")
        }
        let lifetimes = try metrics.expectTimer("http.client.connection.duration", origin(port))
        #expect(lifetimes.values.count == 2, "the evicted connection and the last one")
    }

    @Test func withoutAFactoryOrABootstrapNothingIsMeasured() {
        // The process never bootstraps MetricsSystem: its factory is swift-metrics' no-op one.
        #expect(MetricsSystem.factory is NOOPMetricsHandler)
        let harness = ClientHarness()
        #expect(harness.manager.engine.observer == nil)
        harness.finish()
    }
}
