import Foundation
import Synchronization
import Tracing

/// A task span's attributes made once per request value instead of once per task: `SpanAttributes`
/// is a String-keyed dictionary, and filling one (hashing five keys, growing the storage) cost
/// more than the rest of the span. A span gets `start` whole (one reference), and when it ends
/// as most do, unchanged, with a status and no error, `finished(status:)` whole too. The values
/// are the conventions' (TaskTrace).
final class SpanAttributeTemplate: Sendable {
    /// The request the attributes were made from; an equal one (`Request ==`, a number compared
    /// for a copy of one value) has the same URL and method, so the same attributes.
    let request: Request
    /// `http.request.method`, `url.full`, `server.address`, `server.port`,
    /// `network.protocol.version`.
    let start: SpanAttributes
    /// `start` with the last status a span ended with.
    private let lastFinished = Mutex<(status: Int, attributes: SpanAttributes)?>(nil)

    init(_ request: Request) {
        let url = request.url
        var start = SpanAttributes()
        start.reserveCapacity(6)
        start["http.request.method"] = request.method.rawValue
        start["url.full"] = TaskTrace.fullURL(url)
        start["server.address"] = url.host ?? ""
        start["server.port"] = TaskTrace.port(of: url)
        start["network.protocol.version"] = "1.1"
        self.request = request
        self.start = start
    }

    /// Whether `other` equals the request the attributes were made from; a method, so that the
    /// request is compared in place rather than copied out first.
    func matches(_ other: Request) -> Bool { request == other }

    /// `start` with `http.response.status_code`: the attributes of a span that ended with
    /// `status` and nothing else added.
    func finished(status: Int) -> SpanAttributes {
        if let last = lastFinished.withLock({ $0 }), last.status == status { return last.attributes }
        var attributes = start
        attributes["http.response.status_code"] = status
        lastFinished.withLock { $0 = (status, attributes) }
        return attributes
    }
}

extension SessionTracing {
    /// The attribute template of `request`: the last one when it was made from an equal request,
    /// else a new one, kept as the last.
    func template(for request: Request) -> SpanAttributeTemplate {
        if let last = lastTemplate.withLock({ $0 }), last.matches(request) { return last }
        let template = SpanAttributeTemplate(request)
        lastTemplate.withLock { $0 = template }
        return template
    }
}
