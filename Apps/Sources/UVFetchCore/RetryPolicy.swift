import Foundation
import UVNetworking

/// When and how soon `--retries` sends a request again.
public struct RetryPolicy: Sendable, Equatable {
    /// Retries allowed after the first attempt.
    public var retries: Int
    /// Whether the request may be repeated at all (see `RequestOptions.isIdempotent`).
    public var isIdempotent: Bool
    /// Delay before the first retry, doubled for each one after.
    public var baseDelay: Double = 0.2
    /// Ceiling on one delay, so a long retry budget does not stall a batch for minutes.
    public var maximumDelay: Double = 5

    /// Creates a policy.
    public init(retries: Int, isIdempotent: Bool) {
        self.retries = retries
        self.isIdempotent = isIdempotent
    }

    /// Whether the outcome of attempt number `attempt` (1 for the first) deserves another try:
    /// transport failures, timeouts and 5xx can be transient; 4xx, TLS and parse failures are not.
    public func shouldRetry(attempt: Int, status: Int?, error: (any Error)?) -> Bool {
        guard isIdempotent, attempt <= retries else { return false }
        if let status, (500..<600).contains(status) { return true }
        guard let error = error as? NetworkingError else { return false }
        return error.kind == .transport || error.kind == .timeout
    }

    /// Seconds to wait before attempt `attempt + 1`: exponential, capped.
    public func delay(afterAttempt attempt: Int) -> Double {
        min(maximumDelay, baseDelay * pow(2, Double(attempt - 1)))
    }
}
