import Foundation
import HTTPTypes
import Testing
import Tracing
@testable import UVNetworking

/// The span's values that take more than a copy, and the injector, without sockets.
@Suite(.tags(.loopback)) struct TaskTraceTests {
    @Test(arguments: [
        ("http://user:secret@example.com:8080/a?b=c", "http://REDACTED:REDACTED@example.com:8080/a?b=c"),
        ("https://token@example.com/", "https://REDACTED:REDACTED@example.com/"),
        ("http://us%40er:p%3Ass@example.com/x", "http://REDACTED:REDACTED@example.com/x"),
        ("http://example.com/plain?q=1", "http://example.com/plain?q=1"),
    ])
    func fullURLHidesCredentials(url: String, expected: String) throws {
        let full = TaskTrace.fullURL(try #require(URL(string: url)))
        #expect(full == expected)
        #expect(!full.contains("secret") && !full.contains("token") && !full.contains("p%3Ass"))
    }

    @Test func portFallsBackToTheSchemesDefault() {
        #expect(TaskTrace.port(of: URL(string: "http://example.com/")!) == 80)
        #expect(TaskTrace.port(of: URL(string: "https://example.com/")!) == 443)
        #expect(TaskTrace.port(of: URL(string: "http://example.com:8080/")!) == 8080)
    }

    @Test func errorTypeIsTheCodeName() {
        #expect(TaskTrace.errorType(NetworkingError(.cancelled, "x")) == "cancelled")
        #expect(TaskTrace.errorType(CocoaError(.fileNoSuchFile)) == "CocoaError")
    }

    @Test func injectorReplacesAnExistingField() {
        var fields: HTTPFields = [.init("traceparent")!: "old", .accept: "*/*"]
        HTTPFieldsInjector().inject("new", forKey: "traceparent", into: &fields)
        HTTPFieldsInjector().inject("ignored", forKey: "bad name", into: &fields)
        #expect(fields[values: .init("traceparent")!] == ["new"])
        #expect(fields[.accept] == "*/*")
        #expect(fields.count == 2)
        #expect(HTTPFieldsExtractor().extract(key: "TraceParent", from: fields) == "new")
    }

    @Test func startInjectsTheSpansContextAndReplacesTheCallers() throws {
        let tracer = RecordingTracer()
        var request = Request(url: URL(string: "http://a:b@127.0.0.1:1/x")!, method: .post)
        request.setValue("00-00000000000000000000000000000001-0000000000000001-01", forHTTPHeaderField: "Traceparent")
        let sent = TaskTrace(tracer: tracer, request: request).request(from: request)
        let span = try #require(tracer.clientSpans.first)
        #expect(span.operationName == "POST")
        #expect(sent.headerFields.filter { $0.name.lowercased() == "traceparent" }.map(\.value) == [span.ids.traceparent])
        #expect(sent.value(forHTTPHeaderField: "tracestate") == "rec=\(span.ids.spanID)")
        #expect(span.string("url.full") == "http://REDACTED:REDACTED@127.0.0.1:1/x")
        #expect(span.string("server.address") == "127.0.0.1")
        #expect(span.int("server.port") == 1)
        #expect(span.string("network.protocol.version") == nil, "known once a response comes")
        #expect(span.endCount == 0)
    }

    /// A request that carries an inbound request's `traceparent` and `tracestate` (a proxy
    /// forwarding fields): the tracer replaces the `traceparent` but, its own state being empty,
    /// writes no `tracestate`. The caller's `tracestate` describes another parent and must not
    /// go with the new `traceparent` (W3C Trace Context: it is the companion of its traceparent).
    @Test func aCallersTraceStateDoesNotOutliveItsTraceparent() throws {
        let tracer = RecordingTracer(injectsTraceState: false)
        var request = Request(url: URL(string: "http://127.0.0.1:1/x")!)
        request.setValue("00-00000000000000000000000000000001-0000000000000001-01", forHTTPHeaderField: "traceparent")
        request.setValue("other=inbound", forHTTPHeaderField: "TraceState")
        let sent = TaskTrace(tracer: tracer, request: request).request(from: request)
        let span = try #require(tracer.clientSpans.first)
        #expect(sent.value(forHTTPHeaderField: "traceparent") == span.ids.traceparent)
        #expect(sent.value(forHTTPHeaderField: "tracestate") == nil)
        // A caller's tracestate alone goes too: it sits beside a traceparent that is ours.
        var stateOnly = Request(url: URL(string: "http://127.0.0.1:1/x")!)
        stateOnly.setValue("other=inbound", forHTTPHeaderField: "tracestate")
        #expect(TaskTrace(tracer: tracer, request: stateOnly).request(from: stateOnly).value(forHTTPHeaderField: "tracestate") == nil)
    }

    @Test func endsOnceWithErrorStatusFromA4xx() throws {
        let tracer = RecordingTracer()
        let trace = TaskTrace(tracer: tracer, request: Request(url: URL(string: "http://127.0.0.1:1/")!))
        trace.end(status: 404, protocolVersion: "1.1", error: nil)
        trace.end(status: 200, protocolVersion: "1.1", error: NetworkingError(.cancelled, "late"))
        let span = try #require(tracer.clientSpans.first)
        #expect(span.endCount == 1)
        #expect(span.int("http.response.status_code") == 404)
        #expect(span.string("error.type") == "404")
        #expect(span.status?.code == .error)
    }

    /// A span that ends as most do takes the template's finished attributes: the same values
    /// as set one by one, the start's five and the status.
    @Test func aPlainEndGivesTheStartAttributesAndTheStatus() throws {
        let tracer = RecordingTracer()
        let request = Request(url: URL(string: "http://127.0.0.1:8/x")!)
        let template = SpanAttributeTemplate(request)
        for status in [200, 204, 200] {
            TaskTrace(tracer: tracer, request: request, template: template).end(status: status, protocolVersion: "1.1", error: nil)
        }
        let spans = tracer.clientSpans
        try #require(spans.count == 3)
        for (span, status) in zip(spans, [200, 204, 200]) {
            #expect(span.attributes.count == 6)
            #expect(span.int("http.response.status_code") == status)
            #expect(span.string("http.request.method") == "GET")
            #expect(span.string("url.full") == "http://127.0.0.1:8/x")
            #expect(span.string("server.address") == "127.0.0.1")
            #expect(span.int("server.port") == 8)
            #expect(span.string("network.protocol.version") == "1.1")
            #expect(span.status == nil)
        }
    }

    /// Attributes someone else set on the span before it ended are kept, and the status is added.
    @Test func attributesAddedToTheSpanSurviveItsEnd() throws {
        let tracer = RecordingTracer()
        let request = Request(url: URL(string: "http://127.0.0.1:8/x")!)
        let trace = TaskTrace(tracer: tracer, request: request, template: SpanAttributeTemplate(request))
        trace.span.attributes["app.step"] = "fetch"
        trace.end(status: 200, protocolVersion: "1.1", error: nil)
        let span = try #require(tracer.clientSpans.first)
        #expect(span.string("app.step") == "fetch")
        #expect(span.int("http.response.status_code") == 200)
        #expect(span.string("url.full") == "http://127.0.0.1:8/x")
    }

    /// One template per request value: an equal request reuses it, another gets its own.
    @Test func aSessionKeepsTheTemplateOfTheLastRequest() throws {
        var configuration = SessionConfiguration()
        configuration.tracer = RecordingTracer()
        let tracing = try #require(SessionTracing(configuration))
        let first = Request(url: URL(string: "http://127.0.0.1:8/a")!)
        let template = tracing.template(for: first)
        #expect(tracing.template(for: first) === template)
        let other = Request(url: URL(string: "http://127.0.0.1:8/b")!, method: .put)
        let second = tracing.template(for: other)
        #expect(second !== template)
        #expect(second.start.get("url.full") == .string("http://127.0.0.1:8/b"))
        #expect(second.start.get("http.request.method") == .string("PUT"))
    }

    @Test func aNoOpTracerIsNoTracer() {
        #expect(SessionTracing(SessionConfiguration()) == nil)
        var configuration = SessionConfiguration()
        configuration.tracer = NoOpTracer()
        #expect(SessionTracing(configuration) == nil)
        configuration.tracer = RecordingTracer()
        #expect(SessionTracing(configuration)?.tracer is RecordingTracer)
    }
}
