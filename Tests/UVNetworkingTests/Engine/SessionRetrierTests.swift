import Dispatch
import Foundation
import HTTPTypes
import Synchronization
import Testing
@testable import UVNetworking

/// `SessionConfiguration.retrier` against scripted servers on loopback: what is retried and
/// what is not, the waits, what the caller sees of a retried attempt (nothing), cancellation
/// during a wait, and the sinks that cannot take an attempt back.
@Suite(.tags(.loopback)) struct SessionRetrierTests {
    /// A server that answers its requests in turn from `answers` (the last one repeats),
    /// counting them.
    private final class TurnServer: Sendable {
        final class Count: Sendable { let value = Atomic(0) }
        let server: ScriptedServer
        private let served: Count
        var requests: Int { served.value.load(ordering: .relaxed) }

        init(_ answers: [String]) throws {
            let served = Count()
            self.served = served
            server = try ScriptedServer { connection in
                try connection.serveKeepAlive { _ in
                    let turn = served.value.add(1, ordering: .relaxed).oldValue
                    return answers[min(turn, answers.count - 1)]
                }
            }
        }

        var url: String { "http://127.0.0.1:\(server.port)/" }
    }

    private static func policy(_ limit: Int, _ change: (inout RetryPolicy) -> Void = { _ in }) -> RetryPolicy {
        var policy = RetryPolicy(retryLimit: limit)
        policy.backoffBase = 0.01
        change(&policy)
        return policy
    }

    private static let unavailable = ScriptedResponse.text("busy, try later", status: 503, reason: "Service Unavailable")

    @Test func serverErrorThenSuccessDeliversOnlyTheSuccess() throws {
        let server = try TurnServer([Self.unavailable, Self.unavailable, ScriptedResponse.text("fine")])
        let harness = ClientHarness { $0.retrier = Self.policy(3) }
        let (task, wait) = harness.makeTask(ClientHarness.request(server.url))
        task.resume()
        let outcome = try #require(wait(10))
        #expect(outcome.status == 200)
        #expect(outcome.text == "fine")
        #expect(outcome.error == nil)
        #expect(task.retryCount == 2)
        #expect(task.countOfBytesReceived == 4)
        #expect(server.requests == 3)
        server.server.stop()
        harness.finish()
    }

    @Test func theLastAttemptStandsWhenRetriesRunOut() throws {
        let server = try TurnServer([Self.unavailable])
        let harness = ClientHarness { $0.retrier = Self.policy(2) }
        let (task, wait) = harness.makeTask(ClientHarness.request(server.url))
        task.resume()
        let outcome = try #require(wait(10))
        #expect(outcome.status == 503)
        #expect(outcome.text == "busy, try later")
        #expect(outcome.calls == 1)
        #expect(task.retryCount == 2)
        #expect(server.requests == 3)
        server.server.stop()
        harness.finish()
    }

    @Test func retryAfterIsWaitedFor() throws {
        let asked = ScriptedResponse.text("slow down", status: 429, reason: "Too Many Requests", headers: [("Retry-After", "1")])
        let server = try TurnServer([asked, ScriptedResponse.text("ok")])
        let harness = ClientHarness { $0.retrier = Self.policy(1) }
        let started = Date()
        let outcome = harness.fetch(server.url)
        #expect(outcome.status == 200)
        #expect(Date().timeIntervalSince(started) >= 0.95)
        #expect(server.requests == 2)
        server.server.stop()
        harness.finish()
    }

    @Test func aRetryAfterPastTheCapOrTheTotalTimeoutEndsAtOnce() throws {
        let hour = ScriptedResponse.text("later", status: 503, reason: "Service Unavailable", headers: [("Retry-After", "3600")])
        let server = try TurnServer([hour, ScriptedResponse.text("ok")])
        let harness = ClientHarness { $0.retrier = Self.policy(3) }
        let capped = harness.fetch(server.url)
        #expect(capped.status == 503)
        #expect(server.requests == 1)

        // Under the cap, but past the request's total timeout: the response in hand stands.
        let soon = ScriptedResponse.text("later", status: 503, reason: "Service Unavailable", headers: [("Retry-After", "5")])
        let second = try TurnServer([soon, ScriptedResponse.text("ok")])
        var request = ClientHarness.request(second.url)
        request.totalTimeoutInterval = 2
        let started = Date()
        let outcome = harness.fetch(request)
        #expect(outcome.status == 503)
        #expect(Date().timeIntervalSince(started) < 1.5)
        #expect(second.requests == 1)
        server.server.stop()
        second.server.stop()
        harness.finish()
    }

    @Test func postIsNotRetriedByThePolicy() throws {
        let server = try TurnServer([Self.unavailable, ScriptedResponse.text("ok")])
        let harness = ClientHarness { $0.retrier = Self.policy(3) }
        let outcome = harness.fetch(server.url, method: .post, body: "order=1")
        #expect(outcome.status == 503)
        #expect(server.requests == 1)
        server.server.stop()
        harness.finish()
    }

    @Test func transportFailuresAreRetriedOnNewConnections() throws {
        // The first connection is reset once the request is read; the second is cut short in
        // the body (a 200 head, 5 of 10 bytes); the third answers.
        let connections = TurnServer.Count()
        let server = try ScriptedServer { connection in
            let index = connections.value.add(1, ordering: .relaxed).oldValue
            _ = try connection.readRequest()
            switch index {
            case 0: connection.reset()
            case 1:
                try connection.write("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhalf-")
                connection.close()
            default:
                try connection.write(ScriptedResponse.text("whole body"))
                _ = connection.waitForPeerClose()
            }
        }
        let harness = ClientHarness { $0.retrier = Self.policy(3) }
        let (task, wait) = harness.makeTask(ClientHarness.request("http://127.0.0.1:\(server.port)/"))
        task.resume()
        let outcome = try #require(wait(10))
        #expect(outcome.status == 200)
        #expect(outcome.text == "whole body")
        #expect(task.retryCount == 2)
        #expect(task.countOfBytesReceived == 10)
        #expect(connections.value.load(ordering: .relaxed) == 3)
        server.stop()
        harness.finish()
    }

    @Test func aFailureWhileARetriedResponseDrainsIsRetriedOnce() throws {
        // The 503 is retried; its body stalls while being drained, so the inactivity timeout
        // fails that attempt: one wait, not two, and the next connection answers.
        let connections = TurnServer.Count()
        let server = try ScriptedServer { connection in
            let index = connections.value.add(1, ordering: .relaxed).oldValue
            _ = try connection.readRequest()
            if index == 0 {
                try connection.write("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 100\r\n\r\n0123456789")
                _ = connection.waitForPeerClose(timeout: 10)
            } else {
                try connection.write(ScriptedResponse.text("after the stall"))
                _ = connection.waitForPeerClose()
            }
        }
        let harness = ClientHarness { $0.retrier = Self.policy(3) }
        let (task, wait) = harness.makeTask(ClientHarness.request("http://127.0.0.1:\(server.port)/", timeout: 0.5))
        task.resume()
        let outcome = try #require(wait(10))
        #expect(outcome.text == "after the stall")
        #expect(outcome.calls == 1)
        // The status's retry never began its wait: the failure's took its place.
        #expect(task.retryCount == 1)
        #expect(connections.value.load(ordering: .relaxed) == 2)
        server.stop()
        harness.finish()
    }

    @Test func aCancelDuringTheWaitEndsTheTaskOnce() throws {
        let asked = ScriptedResponse.text("later", status: 503, reason: "Service Unavailable", headers: [("Retry-After", "30")])
        let server = try TurnServer([asked])
        let harness = ClientHarness { $0.retrier = Self.policy(3) { $0.maximumRetryAfter = 60 } }
        let (task, wait) = harness.makeTask(ClientHarness.request(server.url))
        task.resume()
        let deadline = Date().addingTimeInterval(5)
        while task.retryCount == 0 && Date() < deadline { usleep(5_000) }
        #expect(task.retryCount == 1)
        #expect(task.state == .running)
        task.cancel()
        let outcome = try #require(wait(5))
        #expect(outcome.code == .cancelled)
        #expect(outcome.calls == 1)
        #expect(server.requests == 1)
        server.server.stop()
        harness.finish()
    }

    @Test func theRetrierSeesEachAttempt() throws {
        final class Recording: RequestRetrier {
            let seen = Mutex<[String]>([])
            func retryDecision(for request: Request, attempt: Int, response: HTTPResponse?, error: (any Error)?,
                               now: Date) -> RetryDecision {
                let what = response.map { "\($0.status.code)" } ?? "\((error as? NetworkingError)?.code.description ?? "-")"
                seen.withLock { $0.append("\(attempt):\(what)") }
                return attempt < 3 ? .retry(after: 0, serverAsked: false) : .doNotRetry
            }
        }
        let retrier = Recording()
        let server = try TurnServer([ScriptedResponse.text("gone", status: 404, reason: "Not Found")])
        // A session that never opens: its connection is refused (the port is closed first).
        let closed = try ScriptedServer { _ in }
        let closedPort = closed.port
        closed.stop()
        let harness = ClientHarness { $0.retrier = retrier }
        let outcome = harness.fetch(server.url)
        #expect(outcome.status == 404)
        let seenForStatus = retrier.seen.withLock { $0 }
        #expect(seenForStatus == ["1:404", "2:404", "3:404"])
        let refused = harness.fetch("http://127.0.0.1:\(closedPort)/")
        #expect(refused.code == .connectionRefused)
        let seenForFailure = retrier.seen.withLock { Array($0.dropFirst(3)) }
        #expect(seenForFailure == ["1:\(NetworkingError.Code.connectionRefused)", "2:\(NetworkingError.Code.connectionRefused)",
                    "3:\(NetworkingError.Code.connectionRefused)"])
        server.server.stop()
        harness.finish()
    }

    @Test func aStreamAndADownloadAreRetriedBeforeTheirBodyStarts() async throws {
        let server = try TurnServer([Self.unavailable, ScriptedResponse.text("streamed")])
        let harness = ClientHarness { $0.retrier = Self.policy(2) }
        let (response, body) = try await harness.manager.bytes(for: ClientHarness.request(server.url))
        #expect(response.status.code == 200)
        var received = [UInt8]()
        for try await chunk in body { received += chunk }
        #expect(String(decoding: received, as: UTF8.self) == "streamed")

        let download = try TurnServer([Self.unavailable, ScriptedResponse.text("file body")])
        let (file, downloaded) = try await harness.manager.download(for: ClientHarness.request(download.url))
        #expect(downloaded.status.code == 200)
        #expect(try String(contentsOf: file, encoding: .utf8) == "file body")
        try? FileManager.default.removeItem(at: file)
        server.server.stop()
        download.server.stop()
        harness.finish()
    }

    @Test func noRetrierMeansOneAttempt() throws {
        let server = try TurnServer([Self.unavailable, ScriptedResponse.text("ok")])
        let harness = ClientHarness()
        let (task, wait) = harness.makeTask(ClientHarness.request(server.url))
        task.resume()
        #expect(try #require(wait(10)).status == 503)
        #expect(task.retryCount == 0)
        #expect(server.requests == 1)
        server.server.stop()
        harness.finish()
    }
}
