import Foundation
import HTTPTypes
import Synchronization
import Testing
import Tracing
@testable import UVNetworking

extension EndToEnd {
    /// A session with a tracer (`SessionConfiguration.tracer`): one client span per task, its
    /// W3C trace context on every request the task sends, the caller's ServiceContext as its
    /// parent. Scripted servers show what arrived on the wire; httpbin echoes it back.
    @Suite(.tags(.nginx)) struct TracingTests {
        /// Request heads a scripted server saw, in order.
        final class Seen: Sendable {
            let requests = Mutex<[ScriptedRequest]>([])
            func add(_ request: ScriptedRequest) { requests.withLock { $0.append(request) } }
            var all: [ScriptedRequest] { requests.withLock { $0 } }
            var traceparents: [String?] { all.map { $0.header("traceparent") } }
        }

        /// A keep-alive server answering `respond` and recording every request.
        private func server(_ seen: Seen, _ respond: @escaping @Sendable (ScriptedRequest) -> String = { _ in ScriptedResponse.text("ok") })
            throws -> ScriptedServer {
            try ScriptedServer { connection in
                try connection.serveKeepAlive { request in
                    seen.add(request)
                    return respond(request)
                }
            }
        }

        private func headersEcho(_ data: Data?) -> [String: Any]? {
            guard let data, let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return nil }
            return json["headers"] as? [String: Any]
        }

        @Test func eachTaskHasOneClientSpanWithTheHTTPAttributes() throws {
            let seen = Seen()
            let server = try server(seen)
            defer { server.stop() }
            let tracer = RecordingTracer()
            let harness = ClientHarness { $0.tracer = tracer }
            defer { harness.finish() }
            let url = "http://127.0.0.1:\(server.port)/items?x=1"
            #expect(harness.fetch(url).status == 200)
            #expect(harness.fetch(url, method: .put, body: "b").status == 200)

            let spans = tracer.clientSpans
            try #require(spans.count == 2)
            #expect(spans.map(\.operationName) == ["GET", "PUT"])
            for (span, method) in zip(spans, ["GET", "PUT"]) {
                #expect(span.endCount == 1)
                #expect(span.parent == nil)
                #expect(span.string("http.request.method") == method)
                #expect(span.string("url.full") == url)
                #expect(span.string("server.address") == "127.0.0.1")
                #expect(span.int("server.port") == server.port)
                #expect(span.string("network.protocol.version") == "1.1")
                #expect(span.int("http.response.status_code") == 200)
                #expect(span.string("error.type") == nil)
                #expect(span.int("http.request.resend_count") == nil)
                #expect(span.status == nil)
            }
            // Each request carried its own span's context.
            #expect(seen.traceparents == spans.map(\.ids.traceparent))
            #expect(seen.all.map { $0.header("tracestate") } == spans.map { "rec=\($0.ids.spanID)" })
            // Two tasks made outside any span: two traces.
            #expect(spans[0].ids.traceID != spans[1].ids.traceID)
        }

        /// One `Request` value sent again and again, so that the session reuses its prepared
        /// head: every request carries its own task's context, and each head is the one the
        /// request gets without a tracer with the trace fields right after the caller's own.
        @Test func aRepeatedRequestCarriesEachTasksOwnContext() throws {
            let seen = Seen()
            let server = try server(seen)
            defer { server.stop() }
            let request = ClientHarness.request("http://u:p@127.0.0.1:\(server.port)/r", fields: [("X-Caller", "c")])
            let untraced = ClientHarness { $0.httpAdditionalHeaders = [("X-Session", "s")] }
            #expect(untraced.fetch(request).status == 200)
            untraced.finish()
            let tracer = RecordingTracer()
            let harness = ClientHarness {
                $0.tracer = tracer
                $0.httpAdditionalHeaders = [("X-Session", "s")]
            }
            defer { harness.finish() }
            for _ in 0..<3 { #expect(harness.fetch(request).status == 200) }

            let spans = tracer.clientSpans
            try #require(spans.count == 3 && seen.all.count == 4)
            let plain = seen.all[0].headers
            let callerEnd = try #require(plain.firstIndex { $0.0 == "X-Caller" }) + 1
            for (sent, span) in zip(seen.all.dropFirst(), spans) {
                var expected = plain
                expected.insert(contentsOf: [("traceparent", span.ids.traceparent), ("tracestate", "rec=\(span.ids.spanID)")],
                                at: callerEnd)
                #expect(sent.headers.map { "\($0.0): \($0.1)" } == expected.map { "\($0.0): \($0.1)" })
            }
            #expect(Set(seen.traceparents.dropFirst().compactMap { $0 }).count == 3)
        }

        @Test func theOriginalRequestStaysAsGivenAndTheCurrentOneCarriesTheContext() throws {
            let seen = Seen()
            let server = try server(seen)
            defer { server.stop() }
            let tracer = RecordingTracer()
            let harness = ClientHarness { $0.tracer = tracer }
            defer { harness.finish() }
            let (task, wait) = harness.makeTask(ClientHarness.request("http://127.0.0.1:\(server.port)/"))
            let span = try #require(tracer.clientSpans.first)
            #expect(task.originalRequest.value(forHTTPHeaderField: "traceparent") == nil)
            #expect(task.currentRequest.value(forHTTPHeaderField: "traceparent") == span.ids.traceparent)
            task.resume()
            #expect(wait(10)?.status == 200)
            #expect(seen.traceparents == [span.ids.traceparent])
        }

        @Test func credentialsNeverReachTheSpan() throws {
            let seen = Seen()
            let server = try server(seen)
            defer { server.stop() }
            let tracer = RecordingTracer()
            let harness = ClientHarness { $0.tracer = tracer }
            defer { harness.finish() }
            #expect(harness.fetch("http://alice:s3cret@127.0.0.1:\(server.port)/private").status == 200)
            let span = try #require(tracer.clientSpans.first)
            #expect(span.string("url.full") == "http://REDACTED:REDACTED@127.0.0.1:\(server.port)/private")
            let everything = "\(span.attributes) \(span.events) \(span.errors)"
            #expect(!everything.contains("s3cret") && !everything.contains("alice"))
            // The credentials still went where they belong.
            #expect(seen.all.first?.header("authorization") != nil)
        }

        @Test func aRefusedConnectionEndsTheSpanWithAnError() throws {
            let closed = try ScriptedServer { _ in }
            let port = closed.port
            closed.stop()
            let tracer = RecordingTracer()
            let harness = ClientHarness { $0.tracer = tracer }
            defer { harness.finish() }
            let outcome = harness.fetch("http://127.0.0.1:\(port)/")
            let code = try #require(outcome.code)
            let span = try #require(tracer.clientSpans.first)
            #expect(span.endCount == 1)
            #expect(span.string("error.type") == code.description)
            #expect(span.status?.code == .error)
            #expect(span.int("http.response.status_code") == nil)
            #expect(span.errors.count == 1)
        }

        @Test func a404ThatFailsValidationIsAnErrorSpan() throws {
            let seen = Seen()
            let server = try server(seen) { _ in ScriptedResponse.text("gone", status: 404, reason: "Not Found") }
            defer { server.stop() }
            let tracer = RecordingTracer()
            let harness = ClientHarness { $0.tracer = tracer }
            defer { harness.finish() }
            harness.manager.responseSerializer = HTTPResponseSerializer()
            let outcome = harness.fetch("http://127.0.0.1:\(server.port)/missing")
            #expect(outcome.code == .unacceptableStatusCode)
            let span = try #require(tracer.clientSpans.first)
            #expect(span.endCount == 1)
            #expect(span.int("http.response.status_code") == 404)
            #expect(span.string("error.type") == "404")
            #expect(span.status?.code == .error)
        }

        @Test func aCancelledTaskEndsItsSpanOnce() throws {
            let arrived = Seen()
            let server = try ScriptedServer { connection in
                arrived.add(try connection.readRequestHead())
                // Never answers: the task is cancelled while it waits for the head.
                _ = connection.waitForPeerClose(timeout: 10)
            }
            defer { server.stop() }
            let tracer = RecordingTracer()
            let harness = ClientHarness { $0.tracer = tracer }
            defer { harness.finish() }
            let (running, waitRunning) = harness.makeTask(ClientHarness.request("http://127.0.0.1:\(server.port)/slow"))
            running.resume()
            #expect(waitUntil(timeout: 5) { !arrived.all.isEmpty })
            running.cancel()
            #expect(waitRunning(10)?.code == .cancelled)
            // One never resumed, cancelled.
            let (idle, waitIdle) = harness.makeTask(ClientHarness.request("http://127.0.0.1:\(server.port)/never"))
            idle.cancel()
            #expect(waitIdle(10)?.code == .cancelled)
            running.cancel()
            idle.cancel()

            let spans = tracer.clientSpans
            try #require(spans.count == 2)
            for span in spans {
                #expect(span.endCount == 1)
                #expect(span.string("error.type") == "cancelled")
                #expect(span.status?.code == .error)
            }
        }

        /// A task made and never resumed keeps its span open: the session's invalidation leaves
        /// such a task alone (docs/lifecycle.md), so only its resume or cancel ends the span,
        /// once (docs/tracing.md said an invalidation would).
        @Test func aTaskNeverResumedKeepsItsSpanOpenUntilResumedOrCancelled() throws {
            let tracer = RecordingTracer()
            let harness = ClientHarness { $0.tracer = tracer }
            let (task, wait) = harness.makeTask(ClientHarness.request("http://127.0.0.1:1/never"))
            let span = try #require(tracer.clientSpans.first)
            harness.invalidate()
            #expect(wait(0.2) == nil, "an invalidation leaves a task never resumed alone")
            #expect(span.endCount == 0)
            task.resume()
            #expect(wait(10)?.code == .sessionInvalidated)
            task.cancel()
            #expect(span.endCount == 1)
            #expect(span.string("error.type") == "sessionInvalidated")
            harness.expectNothingLeft()
        }

        @Test func aRedirectIsAnEventAndBothRequestsCarryTheSpan() throws {
            let seen = Seen()
            let server = try server(seen) { request in
                request.target == "/start"
                    ? ScriptedResponse.text("", status: 302, reason: "Found", headers: [("Location", "/final")])
                    : ScriptedResponse.text("final")
            }
            defer { server.stop() }
            let tracer = RecordingTracer()
            let harness = ClientHarness { $0.tracer = tracer }
            defer { harness.finish() }
            let outcome = harness.fetch("http://127.0.0.1:\(server.port)/start")
            #expect(outcome.text == "final")
            let span = try #require(tracer.clientSpans.first)
            #expect(tracer.clientSpans.count == 1)
            #expect(seen.all.map(\.target) == ["/start", "/final"])
            #expect(seen.traceparents == [span.ids.traceparent, span.ids.traceparent])
            let redirect = try #require(span.events.first)
            #expect(redirect.name == "http.redirect")
            #expect(redirect.attributes.get("http.response.status_code") == .int64(302))
            #expect(redirect.attributes.get("url.full") == .string("http://127.0.0.1:\(server.port)/final"))
            #expect(span.int("http.request.resend_count") == 1)
            #expect(span.int("http.response.status_code") == 200)
            #expect(span.string("url.full") == "http://127.0.0.1:\(server.port)/start")
            #expect(span.endCount == 1)
        }

        @Test func aResendOnAStaleConnectionIsAnEventAndCarriesTheSpan() throws {
            let seen = Seen()
            let server = try ScriptedServer { connection in
                if connection.index == 0 {
                    // One response kept alive, then the next request finds the connection closing.
                    let first = try connection.readRequest()
                    seen.add(first)
                    try connection.write(ScriptedResponse.text("first"))
                    seen.add(try connection.readRequestHead())
                    connection.close()
                } else {
                    try connection.serveKeepAlive { request in
                        seen.add(request)
                        return ScriptedResponse.text("again")
                    }
                }
            }
            defer { server.stop() }
            let tracer = RecordingTracer()
            let harness = ClientHarness { $0.tracer = tracer }
            defer { harness.finish() }
            let url = "http://127.0.0.1:\(server.port)/"
            #expect(harness.fetch(url).text == "first")
            #expect(harness.fetch(url).text == "again")

            let spans = tracer.clientSpans
            try #require(spans.count == 2)
            let resent = spans[1]
            #expect(seen.traceparents == [spans[0].ids.traceparent, resent.ids.traceparent, resent.ids.traceparent])
            #expect(resent.events.map(\.name) == ["http.resend"])
            #expect(resent.int("http.request.resend_count") == 1)
            #expect(resent.int("http.response.status_code") == 200)
            #expect(resent.string("error.type") == nil)
            #expect(resent.endCount == 1)
        }

        @Test(arguments: Wire.allCases) func httpbinSeesTheSpanAsParentOfTheCallersSpan(_ wire: Wire) throws {
            let base = try wire.httpbinBaseURL()
            let tracer = RecordingTracer()
            let harness = wire.harness { $0.tracer = tracer }
            defer { harness.finish() }
            // The task is made inside the caller's span; it runs after the span's scope is over.
            let (task, wait) = tracer.withSpan("handler", ofKind: .server) { _ in
                harness.makeTask(ClientHarness.request(base + "/headers"))
            }
            task.resume()
            let outcome = try #require(wait(30))
            #expect(outcome.status == 200)
            let parent = try #require(tracer.spans.first { $0.kind == .server })
            let client = try #require(tracer.clientSpans.first)
            #expect(client.parent == parent.ids)
            let echoed = try #require(headersEcho(outcome.data)?["Traceparent"] as? String)
            let ids = try #require(RecordedSpanIDs(traceparent: echoed))
            #expect(ids.traceID == parent.ids.traceID)
            #expect(ids.spanID == client.ids.spanID)
            #expect(client.string("network.protocol.version") == (wire == .h2 ? "2" : "1.1"))
            #expect(client.endCount == 1)
        }

        @Test func asyncRequestsTakeTheTaskLocalContext() async throws {
            let httpbin = try TestServers.httpbin()
            let tracer = RecordingTracer()
            let harness = ClientHarness { $0.tracer = tracer }
            defer { harness.finish() }
            var context = ServiceContext.topLevel
            let caller = RecordedSpanIDs(traceID: RecordedSpanIDs.random(hexDigits: 32), spanID: RecordedSpanIDs.random(hexDigits: 16))
            context.recordedSpanIDs = caller
            let response = try await ServiceContext.withValue(context) {
                try await harness.manager.data(for: Request(url: URL(string: httpbin.baseURL + "/headers")!))
            }
            let client = try #require(tracer.clientSpans.first)
            #expect(client.parent == caller)
            let echoed = try #require(headersEcho(response.data)?["Traceparent"] as? String)
            #expect(echoed == client.ids.traceparent)
            #expect(RecordedSpanIDs(traceparent: echoed)?.traceID == caller.traceID)
            #expect(client.endCount == 1)
            #expect(client.int("http.response.status_code") == 200)
        }

        @Test func streamedResponsesEndTheirSpanWithTheBody() async throws {
            let seen = Seen()
            let server = try server(seen) { _ in ScriptedResponse.text(String(repeating: "x", count: 100_000)) }
            defer { server.stop() }
            let tracer = RecordingTracer()
            let harness = ClientHarness { $0.tracer = tracer }
            defer { harness.finish() }
            var context = ServiceContext.topLevel
            let caller = RecordedSpanIDs(traceID: RecordedSpanIDs.random(hexDigits: 32), spanID: RecordedSpanIDs.random(hexDigits: 16))
            context.recordedSpanIDs = caller
            let (response, body) = try await ServiceContext.withValue(context) {
                try await harness.manager.bytes(for: Request(url: URL(string: "http://127.0.0.1:\(server.port)/stream")!))
            }
            #expect(response.status.code == 200)
            var count = 0
            for try await chunk in body { count += chunk.count }
            #expect(count == 100_000)
            let client = try #require(tracer.clientSpans.first)
            #expect(client.parent == caller)
            #expect(seen.traceparents == [client.ids.traceparent])
            #expect(waitUntil(timeout: 5) { client.endCount == 1 })
            #expect(client.int("http.response.status_code") == 200)
        }

        @Test func theProcesssTracerIsTakenWhenTheSessionIsMade() throws {
            let seen = Seen()
            let server = try server(seen)
            defer { server.stop() }
            let tracer = RecordingTracer()
            // `withTracer` scopes the process's tracer (InstrumentationSystem.tracer) without a
            // bootstrap, which a test process could do only once. The configuration names none.
            let harness = withTracer(tracer) { ClientHarness() }
            defer { harness.finish() }
            #expect(harness.manager.tracer is RecordingTracer)
            #expect(harness.fetch("http://127.0.0.1:\(server.port)/").status == 200)
            let span = try #require(tracer.clientSpans.first)
            #expect(seen.traceparents == [span.ids.traceparent])
            #expect(span.endCount == 1)
        }

        @Test func withoutATracerNothingIsInjected() throws {
            let seen = Seen()
            let server = try server(seen)
            defer { server.stop() }
            let harness = ClientHarness()
            defer { harness.finish() }
            #expect(harness.manager.tracer == nil)
            #expect(harness.fetch("http://127.0.0.1:\(server.port)/").status == 200)
            #expect(seen.all.count == 1)
            #expect(seen.all.first?.header("traceparent") == nil)
        }
    }
}
