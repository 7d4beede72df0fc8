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
    /// The task's request as sent: the caller's, with the span's context in its fields.
    let request: Request
    /// Redirects followed and requests sent again, so far: written on the loop, read at the end.
    private let resends = Atomic<Int>(0)
    /// Set by the one `end` that counts.
    private let ended = Atomic<Bool>(false)

    /// Starts the span of a task about to send `request`, parented to the caller's current
    /// `ServiceContext`, and makes `self.request`: `request` with the span's context injected
    /// into its fields (W3C `traceparent`/`tracestate` with a W3C tracer), replacing any the
    /// caller set (a caller's `tracestate` goes when ours has none). Redirects copy the fields, so every request of the task carries the context.
    init(tracer: any Tracer, request: Request) {
        let url = request.url
        let method = request.method.rawValue
        let span = tracer.startSpan(method, context: ServiceContext.current ?? .topLevel, ofKind: .client)
        span.updateAttributes { attributes in
            attributes["http.request.method"] = method
            attributes["url.full"] = Self.fullURL(url)
            attributes["server.address"] = url.host ?? ""
            attributes["server.port"] = Self.port(of: url)
            attributes["network.protocol.version"] = "1.1"
        }
        var injected = HTTPFields()
        tracer.inject(span.context, into: &injected, using: HTTPFieldsInjector())
        var request = request
        // Noted as the fields go by: a look-up in `HTTPFields` by name costs thousands of
        // instructions.
        var wroteParent = false
        var wroteState = false
        for field in injected {
            request.setValue(field.value, forHTTPHeaderField: field.name.rawName)
            if field.name == Self.traceparent { wroteParent = true } else if field.name == Self.tracestate { wroteState = true }
        }
        // A caller's `tracestate` (fields copied from an inbound request) belongs to its
        // `traceparent`: once ours replaces that, it must not go along (W3C Trace Context). A
        // tracer with an empty trace state injects none.
        if wroteParent && !wroteState {
            request.setValue(nil, forHTTPHeaderField: Self.tracestate.rawName)
        }
        self.span = span
        self.request = request
    }

    private static let traceparent = HTTPField.Name("traceparent")!
    private static let tracestate = HTTPField.Name("tracestate")!

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

    /// Ends the span, the first time only: with `status` (the final response's, if one came)
    /// and `error` (why the task failed, if it did). A status of 400 or more is an error for a
    /// client span, as the conventions say, even when the task itself succeeded.
    func end(status: Int?, error: (any Error)?) {
        guard !ended.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let resends = self.resends.load(ordering: .relaxed)
        var errorType: String?
        if let error {
            errorType = Self.errorType(error)
        } else if let status, status >= 400 {
            errorType = String(status)
        }
        span.updateAttributes { attributes in
            if let status { attributes["http.response.status_code"] = status }
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
    var sentRequest: Request { extras?.trace?.request ?? originalRequest }

    /// Ends the task's span with its final response's status, if one came (`recordCompletion`).
    func endSpan(_ trace: TaskTrace, error: (any Error)?) {
        let status = snapshot.withLock { $0.head?.status }
        trace.end(status: status, error: error)
    }
}
