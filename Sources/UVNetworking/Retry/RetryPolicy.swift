import Foundation
import HTTPTypes

/// The retry rules of curl's `--retry` and of crawlers (Scrapy's RetryMiddleware, wget):
/// idempotent requests only, after a transport failure, a timeout, or one of the statuses
/// that say "try later" (408, 429, 500, 502, 503, 504), waiting what the server's Retry-After
/// asks when it says, an exponential backoff otherwise.
///
/// A Retry-After longer than `maximumRetryAfter` ends the retries: the response stands as the
/// outcome, rather than a request stalled for an hour. A value, cheap to copy and compare.
public struct RetryPolicy: RequestRetrier, Equatable {
    /// Retries allowed after the first attempt.
    public var retryLimit: Int
    /// Statuses worth another attempt: a timeout on the server's side (408), too many requests
    /// (429), and the server errors that are usually passing (500, 502, 503, 504).
    public var retryableStatusCodes: Set<Int> = [408, 429, 500, 502, 503, 504]
    /// Methods that can be repeated without changing anything more on the server (RFC 9110
    /// §9.2.2). POST and PATCH are never retried by default: the first attempt may have
    /// happened, its answer lost.
    public var retryableMethods: Set<HTTPRequest.Method> = [.get, .head, .put, .delete, .options, .trace]
    /// The first backoff, in seconds; doubled for each retry after.
    public var backoffBase: TimeInterval = 0.2
    /// The longest backoff, in seconds.
    public var maximumBackoff: TimeInterval = 5
    /// The longest Retry-After waited for, in seconds; a server that asks for more ends the
    /// retries with its response.
    public var maximumRetryAfter: TimeInterval = 60

    /// A policy of at most `retryLimit` retries, with the defaults above.
    public init(retryLimit: Int) {
        self.retryLimit = retryLimit
    }

    /// See `RequestRetrier`. A retryable status is judged by the response whatever the error
    /// (a serializer's `unacceptableStatusCode` among them). Transport failures and timeouts
    /// (`NetworkingError.Kind.transport` and `.timeout`) are retried, a body cut short after
    /// any status included; TLS, parse, validation and cancellation are not (another attempt
    /// would end the same way).
    public func retryDecision(for request: Request, attempt: Int, response: HTTPResponse?, error: (any Error)?,
                              now: Date) -> RetryDecision {
        guard attempt >= 1, attempt <= retryLimit, retryableMethods.contains(request.method) else { return .doNotRetry }
        if let response, retryableStatusCodes.contains(response.status.code) {
            if let asked = Self.retryAfter(response, now: now) {
                return asked <= maximumRetryAfter ? .retry(after: asked, serverAsked: true) : .doNotRetry
            }
            return .retry(after: backoff(afterAttempt: attempt), serverAsked: false)
        }
        guard let error = error as? NetworkingError, error.kind == .transport || error.kind == .timeout else { return .doNotRetry }
        return .retry(after: backoff(afterAttempt: attempt), serverAsked: false)
    }

    /// The backoff after attempt `attempt`: `backoffBase` doubled per retry, at most
    /// `maximumBackoff`.
    public func backoff(afterAttempt attempt: Int) -> TimeInterval {
        min(maximumBackoff, backoffBase * pow(2, Double(max(0, attempt - 1))))
    }

    /// The seconds `response`'s Retry-After asks to wait (RFC 9110 §10.2.3): delta-seconds, or
    /// an HTTP-date (0 when it has passed); nil without the field or with a value that is
    /// neither. The first field counts when there are several.
    public static func retryAfter(_ response: HTTPResponse, now: Date) -> TimeInterval? {
        guard let value = response.headerFields[.retryAfter]?.trimmingCharacters(in: .whitespaces), !value.isEmpty else {
            return nil
        }
        if value.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            // More digits than a Double keeps exactly are still "a very long time".
            return Double(value) ?? .infinity
        }
        guard let date = HTTPDate.parse(value, now: now) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }
}
