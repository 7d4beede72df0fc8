import CoreMetrics
import Foundation
import LoopbackHTTPServer
import MetricsTestKit
import Testing
@testable import UVNetworking

/// swift-metrics with OpenTelemetry's HTTP client names, recorded by MetricsTestKit's factory
/// given to the session (no process-wide bootstrap).
@Suite(.serialized) struct SessionMetricsTests {
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
                                         [("http.request.method", "GET"), ("http.response.status_code", "200")] + origin(port))
        #expect(ok.values.count == 1 && ok.values[0] > 0)
        #expect(ok.displayUnit == .seconds)
        let failed = try metrics.expectTimer("http.client.request.duration",
                                             [("http.request.method", "GET"), ("http.response.status_code", "503")] + origin(port)
                                                + [("error.type", "503")])
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

    @Test func withoutAFactoryOrABootstrapNothingIsMeasured() {
        // The process never bootstraps MetricsSystem: its factory is swift-metrics' no-op one.
        #expect(MetricsSystem.factory is NOOPMetricsHandler)
        let harness = ClientHarness()
        #expect(harness.manager.engine.observer == nil)
        harness.finish()
    }
}
