import Foundation
import HTTPTypes
import Synchronization
import Tracing

/// A task's client span: started when the task is made, on the caller's thread, as a child of
/// the `ServiceContext` current there; ended exactly once when the task completes (success,
/// failure or cancellation). Made only for sessions with a tracer (`SessionManager.tracer`), so
/// a session without one pays a nil check per task and nothing else.
///
/// Redirects and the library's own resends (a reused connection found closed, a download's
/// restart) are events on this one span (`http.redirect`, `http.resend`), not child spans: the
/// task is one operation for its caller, each resend carries the same `traceparent` (the one
/// injected into the task's request, which redirects copy), and the count ends up in
/// `http.request.resend_count`.
final class TaskTrace: Sendable {
    /// The span; `any Span` since the tracer is chosen at run time.
    let span: any Span
    /// What the tracer injected for the span (W3C `traceparent`/`tracestate` with a W3C
    /// tracer): the task's requests carry these fields (`request(from:)`).
    let fields: InjectedFields
    /// The span's attributes as made for the request (SpanAttributeTemplate).
    private let template: SpanAttributeTemplate
    /// Redirects followed and requests sent again, so far: written on the loop, read at the end.
    private let resends = Atomic<Int>(0)
    /// Set by the one `end` that counts.
    private let ended = Atomic<Bool>(false)

    /// Starts the span of a task about to send `request`, parented to the caller's current
    /// `ServiceContext`, with the attributes of `template` (made from an equal request), and
    /// has the tracer inject the span's context into `fields`.
    init(tracer: any Tracer, request: Request, template: SpanAttributeTemplate) {
        let span = tracer.startSpan(request.method.rawValue, context: ServiceContext.current ?? .topLevel, ofKind: .client)
        // Most spans start with no attributes: they then take the template's dictionary whole,
        // with no key hashed.
        span.updateAttributes { attributes in
            if attributes.isEmpty { attributes = template.start } else { attributes.merge(template.start) }
        }
        var fields = InjectedFields()
        tracer.inject(span.context, into: &fields, using: InjectedFieldsInjector())
        self.span = span
        self.fields = fields
        self.template = template
    }

    /// `init(tracer:request:template:)` with a template made for `request` alone.
    convenience init(tracer: any Tracer, request: Request) {
        self.init(tracer: tracer, request: request, template: SpanAttributeTemplate(request))
    }

    /// `request` as the task sends it: with the span's context in its fields, replacing any the
    /// caller set (a caller's `tracestate` goes when ours has none). Redirects copy the fields,
    /// so every request of the task carries the context. Made when asked (a redirect, a
    /// restart, `currentRequest`), not per task: the prepared bytes get the fields without it
    /// (`PreparedRequestCache.prepare(_:tracedBy:for:)`).
    func request(from request: Request) -> Request {
        var request = request
        for field in fields { request.setValue(field.value, forHTTPHeaderField: field.name) }
        // A caller's `tracestate` (fields copied from an inbound request) belongs to its
        // `traceparent`: once ours replaces that, it must not go along (W3C Trace Context). A
        // tracer with an empty trace state injects none.
        if replacesTraceState {
            request.setValue(nil, forHTTPHeaderField: Self.tracestate)
        }
        return request
    }

    /// The tracer wrote a `traceparent` and no `tracestate`, so a caller's `tracestate` goes.
    var replacesTraceState: Bool { fields.contains(name: Self.traceparent) && !fields.contains(name: Self.tracestate) }

    static let traceparent = "traceparent"
    static let tracestate = "tracestate"

    /// A redirect from a `status` response is followed to `url` (loop thread).
    func redirected(status: Int, to url: URL) {
        let count = resends.add(1, ordering: .relaxed).newValue
        var attributes = SpanAttributes()
        attributes["http.response.status_code"] = status
        attributes["url.full"] = Self.fullURL(url)
        attributes["http.request.resend_count"] = count
        span.addEvent(SpanEvent(name: "http.redirect", attributes: attributes))
    }

    /// The request is sent again, for `reason` (a reused connection closed under it, a download
    /// restarted without Range) (loop thread).
    func resent(reason: String) {
        let count = resends.add(1, ordering: .relaxed).newValue
        var attributes = SpanAttributes()
        attributes["error.type"] = reason
        attributes["http.request.resend_count"] = count
        span.addEvent(SpanEvent(name: "http.resend", attributes: attributes))
    }

    /// Ends the span, the first time only: with `status` and `protocolVersion` (the final
    /// response's, if one came: "1.1", "2") and `error` (why the task failed, if it did). A status of 400 or more is an error for a
    /// client span, as the conventions say, even when the task itself succeeded.
    func end(status: Int?, protocolVersion: String?, error: (any Error)?) {
        guard !ended.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let resends = self.resends.load(ordering: .relaxed)
        var errorType: String?
        if let error {
            errorType = Self.errorType(error)
        } else if let status, status >= 400 {
            errorType = String(status)
        }
        let template = self.template
        span.updateAttributes { attributes in
            // A span that ends as most do, with only the template's attributes and a status,
            // takes the template's finished dictionary whole; any other is updated in place.
            if let status, let protocolVersion, resends == 0, errorType == nil, attributes == template.start {
                attributes = template.finished(status: status, protocolVersion: protocolVersion)
                return
            }
            if let status { attributes["http.response.status_code"] = status }
            if let protocolVersion { attributes["network.protocol.version"] = protocolVersion }
            if resends > 0 { attributes["http.request.resend_count"] = resends }
            if let errorType { attributes["error.type"] = errorType }
        }
        if let error { span.recordError(error) }
        if let errorType { span.setStatus(SpanStatus(code: .error, message: errorType)) }
        span.end()
    }
}

extension SessionTask {
    /// The task's own request as sent: `originalRequest`, with the trace context fields of its
    /// span when it has one. Redirects and restarts are made from it, so they carry them too.
    var sentRequest: Request {
        guard let trace else { return originalRequest }
        return trace.request(from: originalRequest)
    }

    /// Ends the task's span with its final response's status and protocol version, if one came
    /// (`recordCompletion`).
    func endSpan(_ trace: TaskTrace, error: (any Error)?) {
        let head = snapshot.withLock { $0.head }
        trace.end(status: head?.status,
                  protocolVersion: head.map { HTTPClientMetrics.protocolVersion(major: $0.versionMajor, minor: $0.versionMinor) },
                  error: error)
    }
}
