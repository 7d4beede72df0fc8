import Foundation
import HTTPTypes
import Synchronization
import Testing
@testable import UVNetworking

/// A session's cache and its retrier together: a stored response with an error status that the
/// retrier retries goes to the origin within the task's deadline and may be replaced; under a
/// policy that keeps the request off the network, the cache's answer is never retried.
@Suite(.tags(.loopback)) struct SessionCacheRetrierTests {
    /// Retries a response of 500 or more once, after `delay`; counts how often it is asked.
    private final class RetryOnce: RequestRetrier {
        let asked = Atomic(0)
        let delay: TimeInterval
        init(after delay: TimeInterval) { self.delay = delay }

        func retryDecision(for request: Request, attempt: Int, response: HTTPResponse?, error: (any Error)?,
                           now: Date) -> RetryDecision {
            asked.add(1, ordering: .relaxed)
            guard attempt < 2, let status = response?.status.code, status >= 500 else { return .doNotRetry }
            return .retry(after: delay, serverAsked: false)
        }
    }

    /// An origin whose first answer is a 503 that may be stored for a minute; later answers
    /// come from `later`, `laterDelay` seconds after their request.
    private final class Origin: Sendable {
        final class Count: Sendable { let value = Atomic(0) }
        let server: ScriptedServer
        private let served: Count
        var requests: Int { served.value.load(ordering: .relaxed) }

        init(later: String, laterDelay: TimeInterval = 0) throws {
            let served = Count()
            self.served = served
            server = try ScriptedServer { connection in
                try connection.serveKeepAlive { _ in
                    if served.value.add(1, ordering: .relaxed).oldValue == 0 {
                        return ScriptedResponse.text("busy", status: 503, reason: "Service Unavailable",
                                                     headers: [("Cache-Control", "max-age=60")])
                    }
                    if laterDelay > 0 { Thread.sleep(forTimeInterval: laterDelay) }
                    return later
                }
            }
        }

        var url: String { "http://127.0.0.1:\(server.port)/" }
    }

    /// A session with `retrier` on a cache that holds the origin's 503 (stored by a session
    /// without a retrier).
    private static func harness(storingFirstAnswerOf origin: Origin, retrier: RetryOnce) -> ClientHarness {
        let cache = HTTPCache(memoryCapacity: 1 << 20)
        let priming = ClientHarness { $0.cache = cache }
        #expect(priming.fetch(origin.url).status == 503)
        priming.finish()
        return ClientHarness {
            $0.cache = cache
            $0.retrier = retrier
        }
    }

    private static func run(_ harness: ClientHarness, _ request: Request) -> (Outcome?, DataTask) {
        let (task, wait) = harness.makeTask(request)
        task.resume()
        return (wait(20), task)
    }

    @Test func aStoredErrorIsRetriedAtTheOriginAndReplaced() throws {
        let origin = try Origin(later: ScriptedResponse.text("fine", headers: [("Cache-Control", "max-age=60")]))
        let harness = Self.harness(storingFirstAnswerOf: origin, retrier: RetryOnce(after: 0.05))
        let (retried, task) = Self.run(harness, ClientHarness.request(origin.url))
        #expect(retried?.status == 200)
        #expect(retried?.text == "fine")
        #expect(task.retryCount == 1)
        // The origin answered in the end.
        #expect(task.cacheOutcome == .miss)
        #expect(origin.requests == 2)

        // The origin's answer replaced the stored 503.
        let (again, second) = Self.run(harness, ClientHarness.request(origin.url))
        #expect(again?.text == "fine")
        #expect(second.cacheOutcome == .hit)
        #expect(origin.requests == 2)
        origin.server.stop()
        harness.finish()
    }

    @Test func aRetryOfAStoredErrorKeepsTheTasksDeadline() throws {
        // The retry leaves at 0.6 s and its answer comes 0.8 s later: past the total deadline
        // of 1 s counted from the start (a deadline restarted at the retry would let it through).
        let origin = try Origin(later: ScriptedResponse.text("late"), laterDelay: 0.8)
        let harness = Self.harness(storingFirstAnswerOf: origin, retrier: RetryOnce(after: 0.6))
        var request = ClientHarness.request(origin.url)
        request.totalTimeoutInterval = 1
        let started = Date()
        let (outcome, task) = Self.run(harness, request)
        #expect(outcome?.code == .requestTimeout)
        #expect(Date().timeIntervalSince(started) < 1.35)
        #expect(task.retryCount == 1)
        #expect(origin.requests == 2)
        origin.server.stop()
        harness.finish()
    }

    @Test func whatTheCacheAnswersOffTheNetworkIsNotRetried() throws {
        let origin = try Origin(later: ScriptedResponse.text("fine"))
        let retrier = RetryOnce(after: 0)
        let harness = Self.harness(storingFirstAnswerOf: origin, retrier: retrier)
        var dontLoad = ClientHarness.request(origin.url)
        dontLoad.cachePolicy = .returnCacheDataDontLoad
        let (stored, storedTask) = Self.run(harness, dontLoad)
        #expect(stored?.status == 503)
        #expect(storedTask.cacheOutcome == .hit)
        #expect(storedTask.retryCount == 0)

        // only-if-cached with nothing stored: the cache's own 504.
        let onlyIfCached = ClientHarness.request(origin.url + "elsewhere", fields: [("Cache-Control", "only-if-cached")])
        let (gateway, gatewayTask) = Self.run(harness, onlyIfCached)
        #expect(gateway?.status == 504)
        #expect(gatewayTask.retryCount == 0)

        #expect(retrier.asked.load(ordering: .relaxed) == 0)
        #expect(origin.requests == 1)
        origin.server.stop()
        harness.finish()
    }
}
