import Foundation
import HTTPTypes
import Testing
@testable import UVNetworking

/// The retry rules, decided without a server: which outcomes go again, after how long, and
/// which never do.
@Suite(.tags(.unit)) struct RetryPolicyTests {
    private static let now = Date(timeIntervalSince1970: 1_796_000_000)
    private let get = Request(url: URL(string: "http://h/x")!)

    private func response(_ status: Int, retryAfter: String? = nil) -> HTTPResponse {
        var response = HTTPResponse(status: .init(code: status))
        if let retryAfter { response.headerFields[.retryAfter] = retryAfter }
        return response
    }

    private func decide(_ policy: RetryPolicy, _ request: Request? = nil, attempt: Int = 1, response: HTTPResponse? = nil,
                        error: (any Error)? = nil) -> RetryDecision {
        policy.retryDecision(for: request ?? get, attempt: attempt, response: response, error: error, now: Self.now)
    }

    @Test func theStatusesThatSayTryLater() {
        let policy = RetryPolicy(retryLimit: 3)
        for status in [408, 429, 500, 502, 503, 504] {
            #expect(decide(policy, response: response(status)) == .retry(after: 0.2, serverAsked: false), "\(status)")
        }
        for status in [200, 204, 301, 304, 400, 401, 403, 404, 410, 501, 505] {
            #expect(decide(policy, response: response(status)) == .doNotRetry, "\(status)")
        }
        // The serializer's error on a retryable status does not hide it.
        #expect(decide(policy, response: response(503), error: NetworkingError(.unacceptableStatusCode, "503")).retries)
    }

    @Test func transportFailuresAndTimeoutsButNotTheRest() {
        let policy = RetryPolicy(retryLimit: 1)
        #expect(decide(policy, error: NetworkingError(.connectionRefused, "refused")).retries)
        #expect(decide(policy, error: NetworkingError(.requestTimeout, "slow")).retries)
        // A body cut short after a 200 head: the connection failed, not the resource.
        #expect(decide(policy, response: response(200), error: NetworkingError(.connectionReset, "cut")).retries)
        #expect(decide(policy, error: NetworkingError(.serverCertificateUntrusted, "tls")) == .doNotRetry)
        #expect(decide(policy, error: NetworkingError(.cancelled, "cancelled")) == .doNotRetry)
        #expect(decide(policy, error: NetworkingError(.malformedResponse, "parse")) == .doNotRetry)
        #expect(decide(policy, error: CocoaError(.fileNoSuchFile)) == .doNotRetry)
    }

    @Test func neverANonIdempotentMethod() {
        let policy = RetryPolicy(retryLimit: 5)
        for method in [HTTPRequest.Method.post, .patch, .connect] {
            var request = get
            request.method = method
            #expect(decide(policy, request, response: response(503)) == .doNotRetry, "\(method)")
            #expect(decide(policy, request, error: NetworkingError(.requestTimeout, "t")) == .doNotRetry, "\(method)")
        }
        for method in [HTTPRequest.Method.get, .head, .put, .delete, .options, .trace] {
            var request = get
            request.method = method
            #expect(decide(policy, request, response: response(503)).retries, "\(method)")
        }
    }

    @Test func theLimitCountsRetriesAfterTheFirstAttempt() {
        let policy = RetryPolicy(retryLimit: 2)
        #expect(decide(policy, attempt: 1, response: response(503)).retries)
        #expect(decide(policy, attempt: 2, response: response(503)).retries)
        #expect(decide(policy, attempt: 3, response: response(503)) == .doNotRetry)
        #expect(decide(RetryPolicy(retryLimit: 0), response: response(503)) == .doNotRetry)
    }

    @Test func backoffDoublesAndIsCapped() {
        let policy = RetryPolicy(retryLimit: 10)
        #expect(policy.backoff(afterAttempt: 1) == 0.2)
        #expect(policy.backoff(afterAttempt: 3) == 0.8)
        #expect(policy.backoff(afterAttempt: 10) == 5)
        #expect(decide(policy, attempt: 3, response: response(500)) == .retry(after: 0.8, serverAsked: false))
    }

    @Test func retryAfterInSecondsOrAsADate() {
        let policy = RetryPolicy(retryLimit: 1)
        #expect(decide(policy, response: response(429, retryAfter: "3")) == .retry(after: 3, serverAsked: true))
        #expect(decide(policy, response: response(503, retryAfter: " 0 ")) == .retry(after: 0, serverAsked: true))
        let date = "Mon, 30 Nov 2026 00:53:40 GMT" // now + 20 s
        #expect(decide(policy, response: response(503, retryAfter: date)) == .retry(after: 20, serverAsked: true))
        // A date passed is no wait at all; a value that is neither is the usual backoff.
        #expect(decide(policy, response: response(503, retryAfter: "Sun, 06 Nov 1994 08:49:37 GMT")) == .retry(after: 0, serverAsked: true))
        for junk in ["-5", "1.5", "soon", "3 s"] {
            #expect(decide(policy, response: response(503, retryAfter: junk)) == .retry(after: 0.2, serverAsked: false), "\(junk)")
        }
        // Only on a retryable status: a Retry-After on a 301 or 200 is no reason to go again.
        #expect(decide(policy, response: response(301, retryAfter: "1")) == .doNotRetry)
    }

    @Test func aLongerWaitThanAllowedEndsTheRetries() {
        var policy = RetryPolicy(retryLimit: 3)
        policy.maximumRetryAfter = 10
        #expect(decide(policy, response: response(429, retryAfter: "10")) == .retry(after: 10, serverAsked: true))
        #expect(decide(policy, response: response(429, retryAfter: "11")) == .doNotRetry)
        #expect(decide(policy, response: response(429, retryAfter: "99999999999999999999999999")) == .doNotRetry)
        #expect(decide(policy, response: response(503, retryAfter: "Tue, 01 Dec 2026 08:53:20 GMT")) == .doNotRetry)
    }
}
