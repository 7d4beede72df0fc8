import Foundation
import HTTPTypes

/// How long a stored response stays fresh and how old it is (RFC 9111 §4.2), from its fields
/// and the two clock readings a cache keeps: when the request went out and when the response
/// came in. Pure: the caller says what "now" is.
struct CacheFreshness: Equatable, Sendable {
    /// Seconds the response is fresh for, counted from its origin (§4.2.1).
    var lifetime: TimeInterval
    /// Whether `lifetime` is a heuristic one (§4.2.2): no explicit expiration was given.
    var isHeuristic: Bool
    /// The age the response had when it arrived (§4.2.3's corrected_initial_age).
    var initialAge: TimeInterval
    /// When it arrived (`response_time`).
    var responseTime: Date

    /// Statuses a cache may give a heuristic freshness (RFC 9110 §15.1).
    static let heuristicallyCacheable: Set<Int> = [200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501]
    /// The fraction of the time since Last-Modified a heuristic freshness gives (RFC 9111
    /// §4.2.2's typical 10%).
    static let heuristicFraction = 0.1

    /// The freshness of a response of `status` with `fields`, requested at `requestTime` and
    /// received at `responseTime`.
    init(status: Int, fields: HTTPFields, control: CacheControl, requestTime: Date, responseTime: Date) {
        self.responseTime = responseTime
        let date = fields[.date].flatMap { HTTPDate.parse($0, now: responseTime) }
        // §4.2.3: the response's own Date, or when it came when it has none.
        let dateValue = date ?? responseTime
        if control.invalidMaxAge {
            lifetime = 0
            isHeuristic = false
        } else if let maxAge = control.maxAge {
            lifetime = TimeInterval(maxAge)
            isHeuristic = false
        } else if let expires = fields[.expires] {
            // An Expires that is no date ("0") is in the past (§5.3).
            lifetime = HTTPDate.parse(expires, now: responseTime).map { max(0, $0.timeIntervalSince(dateValue)) } ?? 0
            isHeuristic = false
        } else if Self.heuristicallyCacheable.contains(status) || control.isPublic,
                  let lastModified = fields[.lastModified].flatMap({ HTTPDate.parse($0, now: responseTime) }) {
            lifetime = max(0, dateValue.timeIntervalSince(lastModified)) * Self.heuristicFraction
            isHeuristic = true
        } else {
            lifetime = 0
            isHeuristic = true
        }
        let ageValue = fields[.age].flatMap { CacheControl.deltaSeconds($0.trimmingCharacters(in: .whitespaces)) }.map(TimeInterval.init) ?? 0
        let apparentAge = max(0, responseTime.timeIntervalSince(dateValue))
        let responseDelay = max(0, responseTime.timeIntervalSince(requestTime))
        initialAge = max(apparentAge, ageValue + responseDelay)
    }

    /// The response's age at `now` (§4.2.3's current_age).
    func age(at now: Date) -> TimeInterval {
        initialAge + max(0, now.timeIntervalSince(responseTime))
    }

    /// Whether the response is fresh at `now`: its age has not reached its lifetime.
    func isFresh(at now: Date) -> Bool {
        lifetime > age(at: now)
    }
}
