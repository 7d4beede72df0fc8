import Foundation
import Synchronization
import Tracing

/// A task span's attributes made once per request value instead of once per task: `SpanAttributes`
/// is a String-keyed dictionary, and filling one (hashing five keys, growing the storage) cost
/// more than the rest of the span. A span gets `start` whole (one reference), and when it ends
/// as most do, unchanged, with a status and no error, `finished(status:protocolVersion:)` whole
/// too. The values
/// are the conventions' (TaskTrace).
final class SpanAttributeTemplate: Sendable {
    /// The request the attributes were made from; an equal one (`Request ==`, a number compared
    /// for a copy of one value) has the same URL and method, so the same attributes.
    let request: Request
    /// `http.request.method`, `url.full`, `server.address`, `server.port`. Not the protocol:
    /// which one a request speaks is known only once its connection answers (ALPN, or the
    /// session's choice), so it comes with the response.
    let start: SpanAttributes
    /// `start` with the last status and protocol version a span ended with.
    private let lastFinished = Mutex<(status: Int, protocolVersion: String, attributes: SpanAttributes)?>(nil)

    init(_ request: Request) {
        let url = request.url
        var start = SpanAttributes()
        start.reserveCapacity(6)
        start["http.request.method"] = request.method.rawValue
        start["url.full"] = TaskTrace.fullURL(url)
        start["server.address"] = url.host ?? ""
        start["server.port"] = TaskTrace.port(of: url)
        self.request = request
        self.start = start
    }

    /// Whether `other` equals the request the attributes were made from; a method, so that the
    /// request is compared in place rather than copied out first.
    func matches(_ other: Request) -> Bool { request == other }

    /// `start` with `http.response.status_code` and `network.protocol.version`: the attributes
    /// of a span whose response had `status` over `protocolVersion`, and nothing else added.
    func finished(status: Int, protocolVersion: String) -> SpanAttributes {
        if let last = lastFinished.withLock({ $0 }), last.status == status, last.protocolVersion == protocolVersion {
            return last.attributes
        }
        var attributes = start
        attributes["http.response.status_code"] = status
        attributes["network.protocol.version"] = protocolVersion
        lastFinished.withLock { $0 = (status, protocolVersion, attributes) }
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
