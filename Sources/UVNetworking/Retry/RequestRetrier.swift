import Foundation
import HTTPTypes

/// Decides whether a request that ended badly goes again, and when: the shape Alamofire's
/// `RequestRetrier` gave its users, as a value asked once per finished attempt.
///
/// `RetryPolicy` is the one most callers want (the rules curl's `--retry` and crawlers follow);
/// conform a type of your own for other rules. Called on whatever thread the caller asks from;
/// it must not block.
public protocol RequestRetrier: Sendable {
    /// The decision for attempt number `attempt` (1 for the first) of `request`, which ended
    /// with `response` (nil when none came) and `error` (nil for a response the caller judged
    /// by its status alone). `now` is when it ended, for dates a server sent.
    func retryDecision(for request: Request, attempt: Int, response: HTTPResponse?, error: (any Error)?,
                       now: Date) -> RetryDecision
}

/// What a `RequestRetrier` decided for one finished attempt.
public enum RetryDecision: Sendable, Equatable {
    /// The attempt's outcome is final.
    case doNotRetry
    /// Send the request again after `seconds`. `serverAsked` says the delay is the server's
    /// (Retry-After): it speaks for the origin, so a polite caller holds that origin's other
    /// requests as long, where a backoff of its own concerns this request only.
    case retry(after: TimeInterval, serverAsked: Bool)

    /// Whether the request goes again.
    public var retries: Bool {
        if case .retry = self { return true }
        return false
    }
}
