import Foundation
import HTTPTypes

/// What the cache does for one request before it goes out, decided from the request, its
/// policy and what is stored (RFC 9111 §4). Pure: the caller looked the entry up and says what
/// "now" is.
enum CachePlan: Equatable, Sendable {
    /// The stored response answers, without the origin.
    case serve(CacheEntry)
    /// The origin is asked with the stored response's validators; a 304 makes the stored
    /// response (its fields updated) the answer, anything else replaces it.
    case validate(CacheEntry)
    /// The origin answers. `store`: its response may be stored (RFC 9111 §3 still decides);
    /// `lookedUp`: the cache was consulted and had nothing usable (a miss, not a bypass).
    case fetch(store: Bool, lookedUp: Bool)
    /// Nothing usable is stored and the request may not go out: the task fails
    /// (returnCacheDataDontLoad, Fetch's only-if-cached mode).
    case unavailable
    /// Nothing usable is stored and the request said `Cache-Control: only-if-cached`: the
    /// cache answers 504 (Gateway Timeout) itself, as RFC 9111 §5.2.1.7 says.
    case gatewayTimeout

    /// Whether the request goes to the origin (a fetch or a validation).
    var reachesOrigin: Bool {
        switch self {
        case .fetch, .validate: return true
        case .serve, .unavailable, .gatewayTimeout: return false
        }
    }

    /// Whether a request of `method` with `fields` under `policy` consults the cache at all:
    /// a GET or HEAD without Range or conditions of its own, whose policy and Cache-Control
    /// allow it. Requests that do not are `plan`ned without an entry.
    static func looksUp(method: HTTPRequest.Method, fields: HTTPFields, policy: Request.CachePolicy, control: CacheControl) -> Bool {
        guard method == .get || method == .head, policy != .reloadWithoutCaching, policy != .reloadIgnoringLocalCacheData,
              !control.noStore else { return false }
        return !hasRange(fields) && !isConditional(fields)
    }

    /// The plan for a request of `method` with `fields` (its Cache-Control read into `control`)
    /// under `policy`, when `stored` is the stored response its Vary selection matches (nil
    /// for none, or when `looksUp` said no lookup), at `now`.
    static func make(method: HTTPRequest.Method, fields: HTTPFields, policy: Request.CachePolicy, control: CacheControl,
                     stored: CacheEntry?, now: Date) -> CachePlan {
        // Only a full GET's response is stored; a Range asks for a part (RFC 9111 §3.3 lets a
        // cache combine parts: this one keeps none), and a no-store request's bytes are never kept.
        let storable = method == .get && policy != .reloadWithoutCaching && !control.noStore && !hasRange(fields)
        guard looksUp(method: method, fields: fields, policy: policy, control: control) else {
            return .fetch(store: storable, lookedUp: false)
        }
        guard let stored else {
            if policy == .returnCacheDataDontLoad { return .unavailable }
            if policy == .useProtocolCachePolicy && control.onlyIfCached { return .gatewayTimeout }
            return .fetch(store: storable, lookedUp: true)
        }
        switch policy {
        case .returnCacheDataElseLoad, .returnCacheDataDontLoad:
            return .serve(stored)
        case .reloadRevalidatingCacheData:
            return revalidation(of: stored, storable: storable)
        case .useProtocolCachePolicy:
            switch CacheReuse.decide(stored.freshness, response: stored.control, request: control, now: now) {
            case .fresh, .staleAccepted: return .serve(stored)
            // only-if-cached: a response that would need the origin is not there (§5.2.1.7).
            case .validate: return control.onlyIfCached ? .gatewayTimeout : revalidation(of: stored, storable: storable)
            }
        case .reloadIgnoringLocalCacheData, .reloadWithoutCaching:
            return .fetch(store: storable, lookedUp: false)
        }
    }

    /// Validation when the stored response has a validator; else it cannot be validated and
    /// the origin's full answer replaces it. A HEAD answered from a stored GET response is
    /// never validated: it goes to the origin as it is, and its answer is delivered, not stored.
    private static func revalidation(of stored: CacheEntry, storable: Bool) -> CachePlan {
        guard storable, !CacheReuse.conditionalFields(for: stored.fields).isEmpty else { return .fetch(store: storable, lookedUp: true) }
        return .validate(stored)
    }

    private static let conditionNames: [HTTPField.Name] = [.ifNoneMatch, .ifModifiedSince, .ifMatch, .ifUnmodifiedSince, .ifRange]

    /// Whether the request carries preconditions of its own: the caller then wants the origin's
    /// answer to them (a 304 is theirs), not the cache's.
    static func isConditional(_ fields: HTTPFields) -> Bool {
        // One pass over the fields, names compared: `fields[name]` per condition would walk
        // them five times, joining values (about 4,000 instructions a lookup).
        fields.contains { field in conditionNames.contains(field.name) }
    }

    static func hasRange(_ fields: HTTPFields) -> Bool { fields.contains { $0.name == .range } }
}
