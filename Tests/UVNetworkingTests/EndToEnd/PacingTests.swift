import Dispatch
import Foundation
import Synchronization
import Testing
@testable import UVNetworking

extension EndToEnd {
    /// `delayPerHost` and `requestsPerSecondPerHost` against two loopback origins: behaviour
    /// (order, spacing of request starts as the tasks' metrics record them, outcomes), never
    /// speed.
    @Suite(.tags(.loopback)) struct Pacing {
        /// Answers every request at once, on keep-alive connections.
        private func server() throws -> ScriptedServer {
            try ScriptedServer { connection in
                try connection.serveKeepAlive(idleTimeout: 10) { _ in ScriptedResponse.text("ok") }
            }
        }

        /// Starts every request at once and waits for all; returns each task's metrics by its
        /// identifier, the labels in the order the tasks finished, and the outcomes.
        private func runAll(_ harness: ClientHarness, _ requests: [(label: String, url: String)])
            -> (metrics: [Int: TaskMetrics], order: [String], ids: [String: [Int]], outcomes: [Outcome]) {
            // Runs on the completion queue as each task finishes, just before its handler.
            let finished = Mutex([(Int, TaskMetrics)]())
            harness.manager.taskDidFinishCollectingMetrics = { task, taskMetrics in
                finished.withLock { $0.append((task.taskIdentifier, taskMetrics)) }
            }
            var ids: [String: [Int]] = [:]
            var labels: [Int: String] = [:]
            var waits: [(Double) -> Outcome?] = []
            var tasks: [DataTask] = []
            for (label, url) in requests {
                let (task, wait) = harness.makeTask(ClientHarness.request(url))
                ids[label, default: []].append(task.taskIdentifier)
                labels[task.taskIdentifier] = label
                waits.append(wait)
                tasks.append(task)
            }
            for task in tasks { task.resume() }
            let outcomes = waits.map { $0(30) ?? Outcome(response: nil, object: nil, error: nil, calls: 0) }
            harness.queue.sync {}
            let all = finished.withLock { $0 }
            return (Dictionary(all, uniquingKeysWith: { first, _ in first }), all.map { labels[$0.0] ?? "?" }, ids, outcomes)
        }

        private static func requestStarts(_ ids: [Int], _ metrics: [Int: TaskMetrics]) -> [Date] {
            ids.compactMap { metrics[$0]?.transactions.first?.requestStartDate }.sorted()
        }

        @Test func pacedOriginStartsDelayApartWhileAnotherOriginRunsFreely() throws {
            let delay = 0.15
            let harness = ClientHarness { $0.delayPerHost = delay }
            let slow = try server(), fast = try server()
            // A's six come first and B's two after them; every origin is paced, B too.
            let requests = (0..<6).map { ("A", "http://127.0.0.1:\(slow.port)/a\($0)") }
                + (0..<2).map { ("B", "http://127.0.0.1:\(fast.port)/b\($0)") }
            let run = runAll(harness, requests)
            #expect(run.outcomes.allSatisfy { $0.status == 200 && $0.calls == 1 })
            let startsA = Self.requestStarts(run.ids["A"]!, run.metrics)
            #expect(startsA.count == 6)
            for (earlier, later) in zip(startsA, startsA.dropFirst()) {
                // Whole loop milliseconds: at most one lost to rounding down the clock.
                #expect(later.timeIntervalSince(earlier) >= delay - 0.002,
                        "A's requests started \(later.timeIntervalSince(earlier)) s apart")
            }
            // The other origin is not held back by A's queue: all of B is done before A's last.
            let lastB = run.order.lastIndex(of: "B")!
            let lastA = run.order.lastIndex(of: "A")!
            #expect(lastB < lastA, "completion order \(run.order)")
            // B's first did not queue behind A's: it started before A's second.
            let startsB = Self.requestStarts(run.ids["B"]!, run.metrics)
            #expect(startsB.count == 2)
            if startsA.count > 1, let firstB = startsB.first { #expect(firstB < startsA[1]) }
            slow.stop(); fast.stop()
            harness.finish()
        }

        @Test func rateSpacesStartsLikeADelay() throws {
            let harness = ClientHarness { $0.requestsPerSecondPerHost = 10 }
            let origin = try server()
            let run = runAll(harness, (0..<4).map { ("A", "http://127.0.0.1:\(origin.port)/\($0)") })
            #expect(run.outcomes.allSatisfy { $0.status == 200 && $0.calls == 1 })
            let starts = Self.requestStarts(run.ids["A"]!, run.metrics)
            #expect(starts.count == 4)
            for (earlier, later) in zip(starts, starts.dropFirst()) {
                #expect(later.timeIntervalSince(earlier) >= 0.1 - 0.002)
            }
            origin.stop()
            harness.finish()
        }

        @Test func pacedWaitCountsAgainstTimeoutAndCancelEndsItOnce() throws {
            // The next turn is far away: the second request times out waiting for it, the third
            // is cancelled while waiting; neither ever reaches the server.
            let harness = ClientHarness { $0.delayPerHost = 30 }
            let received = Mutex(0)
            let origin = try ScriptedServer { connection in
                try connection.serveKeepAlive(idleTimeout: 10) { _ in
                    received.withLock { $0 += 1 }
                    return ScriptedResponse.text("ok")
                }
            }
            let url = "http://127.0.0.1:\(origin.port)/"
            #expect(harness.fetch(url).status == 200)
            let (waiting, waitForTimeout) = harness.makeTask(ClientHarness.request(url, timeout: 0.3))
            let (cancelled, waitForCancel) = harness.makeTask(ClientHarness.request(url))
            waiting.resume()
            cancelled.resume()
            let timedOut = waitForTimeout(10)
            #expect(timedOut?.code == .requestTimeout)
            #expect(timedOut?.calls == 1)
            cancelled.cancel()
            let cancelOutcome = waitForCancel(10)
            #expect(cancelOutcome?.code == .cancelled)
            #expect(cancelOutcome?.calls == 1)
            #expect(received.withLock { $0 } == 1)
            // Other origins meanwhile: at once.
            let other = try server()
            #expect(harness.fetch(ClientHarness.request("http://127.0.0.1:\(other.port)/"), within: 5).status == 200)
            origin.stop(); other.stop()
            harness.finish()
        }
    
        @Test func invalidationEndsWaitingRequestsOnceEach() throws {
            // The server first: its descriptors belong to the baseline `finish` compares with.
            let origin = try server()
            let harness = ClientHarness { $0.delayPerHost = 30 }
            let url = "http://127.0.0.1:\(origin.port)/"
            let made = (0..<3).map { _ in harness.makeTask(ClientHarness.request(url)) }
            for (task, _) in made { task.resume() }
            #expect(made[0].wait(10)?.status == 200)
            // Cancels the two still waiting for their turn, and closes the pacer's timer: finish
            // checks that no loop handle is left.
            harness.finish()
            for (_, wait) in made.dropFirst() {
                let outcome = wait(10)
                #expect(outcome?.code == .cancelled)
                #expect(outcome?.calls == 1)
            }
            origin.stop()
        }
    
        @Test func eachRedirectTakesATurn() throws {
            let origin = try ScriptedServer { connection in
                try connection.serveKeepAlive(idleTimeout: 10) { request in
                    request.target == "/start"
                        ? "HTTP/1.1 302 Found\r\nLocation: /end\r\nContent-Length: 0\r\n\r\n"
                        : ScriptedResponse.text("ok")
                }
            }
            let harness = ClientHarness { $0.delayPerHost = 0.15 }
            let run = runAll(harness, [("A", "http://127.0.0.1:\(origin.port)/start")])
            #expect(run.outcomes.first?.status == 200)
            let starts = run.metrics.values.first?.transactions.compactMap(\.requestStartDate) ?? []
            #expect(starts.count == 2)
            if starts.count == 2 { #expect(starts[1].timeIntervalSince(starts[0]) >= 0.15 - 0.002) }
            origin.stop()
            harness.finish()
        }
    }
}
