import Foundation
import HTTPTypes

/// Whether a stored response may answer a request without the origin (RFC 9111 §4), from the
/// directives of both and the response's freshness. Pure: the stored response's Vary match is
/// checked apart (`CacheVary`), and what the caller does with "validate" (a conditional
/// request, or a 504 under only-if-cached) is its own.
enum CacheReuse: Equatable, Sendable {
    /// Fresh enough for the request: served from the store.
    case fresh
    /// Stale, and the request accepts it (max-stale): served from the store.
    case staleAccepted
    /// The origin must be asked (with the stored validators, when it has some).
    case validate

    /// The decision for a stored response whose freshness is `freshness` and whose directives
    /// are `response`, asked by a request with directives `request`, at `now`.
    static func decide(_ freshness: CacheFreshness, response: CacheControl, request: CacheControl, now: Date) -> CacheReuse {
        // no-cache on either side: never without a successful validation (§5.2.1.4, §5.2.2.4).
        if response.noCache || request.noCache { return .validate }
        let age = freshness.age(at: now)
        if let maxAge = request.maxAge, age > TimeInterval(maxAge) || maxAge == 0 { return .validate }
        if freshness.isFresh(at: now) {
            if let minFresh = request.minFresh, freshness.lifetime - age < TimeInterval(minFresh) { return .validate }
            return .fresh
        }
        // Stale: only a request's max-stale lets it be used, never against must-revalidate
        // (§4.2.4, §5.2.2.2). Serving stale is a MAY, and this cache does not for a response
        // that was stale already when it arrived (its Age past its lifetime): nobody promised
        // it fresh for any time, and the web-platform-tests expect it fetched again.
        guard !response.mustRevalidate, let allowed = request.maxStale, freshness.initialAge < freshness.lifetime else {
            return .validate
        }
        if let allowed, age - freshness.lifetime > TimeInterval(allowed) { return .validate }
        return .staleAccepted
    }

    /// The fields that make a request conditional on a stored response (§4.3.1): its ETag as
    /// If-None-Match, its Last-Modified as If-Modified-Since; empty when it has neither (the
    /// request then goes unconditional).
    static func conditionalFields(for stored: HTTPFields) -> [(name: String, value: String)] {
        var fields: [(name: String, value: String)] = []
        if let etag = stored[.eTag] { fields.append(("If-None-Match", etag)) }
        if let lastModified = stored[.lastModified] { fields.append(("If-Modified-Since", lastModified)) }
        return fields
    }
}
