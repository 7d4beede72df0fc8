import Foundation
import HTTPTypes

/// A response as a cache keeps it, like NSCachedURLResponse: its head, its body, and when the
/// exchange that brought it happened (what its age is counted from, RFC 9111 §4.2.3).
///
/// The body is the one the caller was given: when the session decoded a content coding (gzip,
/// br, ...), `data` holds the decoded bytes and `response` no longer names the coding.
public struct CachedResponse: Sendable, Equatable {
    /// The status and fields.
    public var response: HTTPResponse
    /// The body.
    public var data: Data
    /// When the request that brought it was sent, and when the response arrived.
    public var requestDate: Date
    public var responseDate: Date

    /// A response to keep; both dates default to now (a response made up by the caller).
    public init(response: HTTPResponse, data: Data, requestDate: Date = Date(), responseDate: Date = Date()) {
        self.response = response
        self.data = data
        self.requestDate = requestDate
        self.responseDate = responseDate
    }

    /// The stored form, filed for a request that sent `requestFields` to `url`.
    func entry(for url: URL, requestFields: HTTPFields) -> CacheEntry {
        let names = CacheVary.names(in: response.headerFields)
        return CacheEntry(key: CacheKey.key(for: url), status: response.status.code, reason: response.status.reasonPhrase,
                          fields: response.headerFields, body: data, requestTime: requestDate, responseTime: responseDate,
                          varyNames: names, varyValues: CacheVary.selected(names, from: requestFields))
    }

    /// The public face of a stored entry.
    init(_ entry: CacheEntry) {
        var response = HTTPResponse(status: .init(code: entry.status, reasonPhrase: entry.reason))
        response.headerFields = entry.fields
        self.init(response: response, data: entry.body, requestDate: entry.requestTime, responseDate: entry.responseTime)
    }
}
