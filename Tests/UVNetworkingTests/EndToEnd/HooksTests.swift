import Dispatch
import Foundation
import HTTPTypes
import Synchronization
import Testing
@_spi(Testing) @testable import UVNetworking

/// Collects values from any thread.
final class Recorder<Value: Sendable>: Sendable {
    private let values = Mutex<[Value]>([])
    func append(_ value: Value) { values.withLock { $0.append(value) } }
    var all: [Value] { values.withLock { $0 } }
    var count: Int { values.withLock { $0.count } }
}

/// A task whose completion handler counts its calls and keeps its error.
private func countingTask(_ harness: ClientHarness, _ url: String)
    -> (task: DataTask, done: DispatchSemaphore, calls: Recorder<NetworkingError.Code?>) {
    let done = DispatchSemaphore(value: 0)
    let calls = Recorder<NetworkingError.Code?>()
    let task = harness.manager.dataTask(with: ClientHarness.request(url), completionHandler: { _, _, error in
        calls.append((error as? NetworkingError)?.code)
        done.signal()
    })
    return (task, done, calls)
}

/// Whether the current code runs on the harness's completion queue.
private let completionQueueKey = DispatchSpecificKey<Bool>()

private func markCompletionQueue(_ harness: ClientHarness) {
    harness.queue.setSpecific(key: completionQueueKey, value: true)
}

private var onCompletionQueue: Bool { DispatchQueue.getSpecific(key: completionQueueKey) == true }

extension EndToEnd {
    /// The manager's closures (AFURLSessionManager's blocks) against nginx and httpbin; the ones
    /// that need no HTTP/1.1 connection behaviour run over both protocols.
    @Suite(.tags(.nginx)) struct SessionHooks {
        // MARK: did complete

        @Test(arguments: Wire.allCases) func didCompleteRunsOncePerTaskBeforeTheCompletionHandler(_ wire: Wire) throws {
            let base = try wire.nginxURL("")
            let harness = wire.harness()
            markCompletionQueue(harness)
            let events = Recorder<(id: Int, event: String, code: NetworkingError.Code?, onQueue: Bool)>()
            harness.manager.taskDidComplete = { task, error in
                events.append((task.taskIdentifier, "hook", (error as? NetworkingError)?.code, onCompletionQueue))
            }
            // Three tasks whose handlers record too: a success, one cancelled before it started,
            // and a 404 (a response, not a transport error: the hook gets nil, as in AFNetworking).
            harness.manager.responseSerializer = HTTPResponseSerializer()
            var ids: [Int] = []
            let done = DispatchSemaphore(value: 0)
            for path in ["/hello", "/hello", "/missing"] {
                let task = harness.manager.dataTask(with: ClientHarness.request(base + path), completionHandler: { _, _, error in
                    events.append((-1, "handler", (error as? NetworkingError)?.code, onCompletionQueue))
                    done.signal()
                })
                ids.append(task.taskIdentifier)
                if ids.count == 2 { task.cancel() } else { task.resume() }
                #expect(done.wait(timeout: .now() + 10) == .success)
            }
            #expect(waitUntil(timeout: 5) { events.count == 6 })
            Thread.sleep(forTimeInterval: 0.1)
            let seen = events.all
            #expect(seen.map(\.event) == ["hook", "handler", "hook", "handler", "hook", "handler"])
            #expect(seen.filter { $0.event == "hook" }.map(\.id) == ids)
            #expect(seen.filter { $0.event == "hook" }.map(\.code) == [nil, .cancelled, nil])
            #expect(seen.filter { $0.event == "handler" }.map(\.code) == [nil, .cancelled, .unacceptableStatusCode])
            #expect(seen.allSatisfy { $0.onQueue })
            harness.finish()
        }

        // MARK: did receive response

        @Test(arguments: Wire.allCases) func allowContinuesAfterTheClosureAnswers(_ wire: Wire) throws {
            let base = try wire.nginxURL("")
            let harness = wire.harness()
            markCompletionQueue(harness)
            let answered = Mutex(false)
            let asked = Recorder<(status: Int, onQueue: Bool)>()
            harness.manager.dataTaskDidReceiveResponse = { _, response in
                asked.append((response.status.code, onCompletionQueue))
                // The loop must wait: the body cannot complete before this returns.
                Thread.sleep(forTimeInterval: 0.2)
                answered.withLock { $0 = true }
                return .allow
            }
            let answeredFirst = Mutex<[Bool]>([])
            for path in ["/hello", "/large", "/no-content"] {
                let (task, wait) = harness.makeTask(ClientHarness.request(base + path))
                answered.withLock { $0 = false }
                task.resume()
                let outcome = try #require(wait(10))
                answeredFirst.withLock { $0.append(answered.withLock { $0 }) }
                #expect(outcome.error == nil, "\(path)")
                switch path {
                case "/hello": #expect(outcome.text == NginxServer.helloBody)
                case "/large": #expect(outcome.data == Data(NginxServer.largeBody(count: NginxServer.largeSize)))
                default: #expect(outcome.status == 204)
                }
            }
            #expect(answeredFirst.withLock { $0 } == [true, true, true])
            #expect(asked.all.map(\.status) == [200, 200, 204])
            #expect(asked.all.allSatisfy { $0.onQueue })
            // The hold left the pooled connection readable: it serves the next request.
            #expect(harness.fetch(base + "/hello").text == NginxServer.helloBody)
            #expect(harness.manager.openConnectionCount == 1)
            harness.finish()
        }

        @Test func cancelCompletesTheTaskAsCancelledOnceAndClosesTheConnection() throws {
            let nginx = try TestServers.nginx()
            let harness = ClientHarness()
            let chunks = Recorder<Int>()
            harness.manager.dataTaskDidReceiveData = { _, data in chunks.append(data.count) }
            harness.manager.dataTaskDidReceiveResponse = { _, _ in .cancel }
            let (task, done, calls) = countingTask(harness, nginx.baseURL + "/large")
            task.resume()
            #expect(done.wait(timeout: .now() + 10) == .success)
            #expect(task.state == .completed)
            #expect((task.error as? NetworkingError)?.code == .cancelled)
            // The response was cut short: its connection is closed, not pooled.
            #expect(waitUntil(timeout: 5) { harness.manager.openConnectionCount == 0 })
            // A moment for a wrong second completion or a late chunk to show.
            Thread.sleep(forTimeInterval: 0.1)
            #expect(calls.all == [.cancelled])
            #expect(chunks.count == 0)
            harness.finish()
        }

        @Test func cancelAfterTheWholeResponseArrivedKeepsTheConnection() throws {
            let nginx = try TestServers.nginx()
            let harness = ClientHarness()
            let metrics = Recorder<TaskMetrics>()
            harness.manager.taskDidFinishCollectingMetrics = { _, value in metrics.append(value) }
            // The 12-byte response arrives in the head's read: the exchange ends while held.
            harness.manager.dataTaskDidReceiveResponse = { _, _ in
                Thread.sleep(forTimeInterval: 0.1)
                return .cancel
            }
            let outcome = harness.fetch(nginx.baseURL + "/hello")
            #expect(outcome.code == .cancelled)
            #expect(outcome.calls == 1)
            harness.manager.dataTaskDidReceiveResponse = nil
            let next = harness.fetch(nginx.baseURL + "/hello")
            #expect(next.text == NginxServer.helloBody)
            #expect(harness.manager.openConnectionCount == 1)
            #expect(waitUntil(timeout: 5) { metrics.count == 2 })
            #expect(metrics.all.map(\.isReusedConnection) == [false, true])
            harness.finish()
        }

        @Test func aTaskCancelledWhileTheClosureDecidesCompletesOnce() throws {
            let nginx = try TestServers.nginx()
            let harness = ClientHarness()
            let release = DispatchSemaphore(value: 0)
            let asked = DispatchSemaphore(value: 0)
            harness.manager.dataTaskDidReceiveResponse = { _, _ in
                asked.signal()
                _ = release.wait(timeout: .now() + 10)
                return .allow
            }
            let (task, done, calls) = countingTask(harness, nginx.baseURL + "/large")
            task.resume()
            #expect(asked.wait(timeout: .now() + 10) == .success)
            task.cancel()
            release.signal()
            #expect(done.wait(timeout: .now() + 10) == .success)
            Thread.sleep(forTimeInterval: 0.1)
            #expect(calls.all == [.cancelled])
            #expect(waitUntil(timeout: 5) { harness.manager.openConnectionCount == 0 })
            harness.finish()
        }

        // MARK: did receive data

        @Test(arguments: Wire.allCases) func dataChunksArriveInOrderAndMakeTheBody(_ wire: Wire) throws {
            let base = try wire.nginxURL("")
            let harness = wire.harness()
            markCompletionQueue(harness)
            let received = Mutex(Data())
            let chunkCount = Mutex(0)
            let offQueue = Mutex(0)
            harness.manager.dataTaskDidReceiveData = { _, data in
                received.withLock { $0.append(data) }
                chunkCount.withLock { $0 += 1 }
                if !onCompletionQueue { offQueue.withLock { $0 += 1 } }
            }
            let expected = Data(NginxServer.largeBody(count: NginxServer.largeSize))
            for path in ["/large", "/large-chunked"] {
                received.withLock { $0 = Data() }
                chunkCount.withLock { $0 = 0 }
                let seenAtCompletion = Mutex(Data())
                let done = DispatchSemaphore(value: 0)
                harness.manager.dataTask(with: ClientHarness.request(base + path), completionHandler: { _, object, _ in
                    // Every chunk was delivered before the completion handler.
                    seenAtCompletion.withLock { $0 = received.withLock { $0 } }
                    #expect(object as? Data == expected)
                    done.signal()
                }).resume()
                #expect(done.wait(timeout: .now() + 20) == .success)
                #expect(seenAtCompletion.withLock { $0 } == expected, "\(path)")
                #expect(chunkCount.withLock { $0 } > 1, "\(path)")
            }
            #expect(offQueue.withLock { $0 } == 0)
            harness.finish()
        }

        @Test(arguments: Wire.allCases) func chunksHeldForTheDispositionFollowIt(_ wire: Wire) throws {
            let base = try wire.nginxURL("")
            // A concurrent completion queue: the per-task channel must still keep order.
            let harness = wire.harness()
            harness.manager.completionQueue = DispatchQueue(label: "uvnetworking.tests.concurrent", attributes: .concurrent)
            let events = Recorder<String>()
            let received = Mutex(Data())
            harness.manager.dataTaskDidReceiveResponse = { _, _ in
                events.append("response")
                Thread.sleep(forTimeInterval: 0.1)
                return .allow
            }
            harness.manager.dataTaskDidReceiveData = { _, data in
                if events.all.last != "data" { events.append("data") }
                received.withLock { $0.append(data) }
            }
            harness.manager.taskDidComplete = { _, _ in events.append("complete") }
            let outcome = harness.fetch(base + "/large")
            #expect(outcome.error == nil)
            #expect(received.withLock { $0 } == Data(NginxServer.largeBody(count: NginxServer.largeSize)))
            #expect(events.all == ["response", "data", "complete"])
            harness.finish()
        }

        // MARK: did send body data

        @Test(arguments: Wire.allCases) func bodySentReachesTheTotal(_ wire: Wire) throws {
            let base = try wire.httpbinBaseURL()
            let harness = wire.harness()
            markCompletionQueue(harness)
            let calls = Recorder<(sent: Int64, total: Int64, expected: Int64, onQueue: Bool)>()
            harness.manager.taskDidSendBodyData = { _, sent, total, expected in
                calls.append((sent, total, expected, onCompletionQueue))
            }
            let body = String(repeating: "0123456789abcdef", count: 16 * 1024)
            let outcome = harness.fetch(base + "/post", method: .post,
                                        fields: [("Content-Type", "application/octet-stream")], body: body)
            #expect(outcome.status == 200)
            wire.expectSpoken(outcome)
            #expect(waitUntil(timeout: 5) { calls.count > 0 })
            let seen = calls.all
            #expect(seen.map(\.sent).reduce(0, +) == Int64(body.utf8.count))
            #expect(seen.last?.total == Int64(body.utf8.count))
            #expect(seen.allSatisfy { $0.expected == Int64(body.utf8.count) && $0.onQueue })
            // A GET has no body: no call.
            #expect(harness.fetch(base + "/get").status == 200)
            Thread.sleep(forTimeInterval: 0.1)
            #expect(calls.count == seen.count)
            harness.finish()
        }

        // MARK: metrics

        @Test(arguments: Wire.allCases) func metricsArriveOncePerTaskBeforeDidComplete(_ wire: Wire) throws {
            let base = try wire.nginxURL("")
            let harness = wire.harness()
            let order = Recorder<(id: Int, event: String)>()
            let metrics = Recorder<(id: Int, metrics: TaskMetrics)>()
            harness.manager.taskDidFinishCollectingMetrics = { task, value in
                metrics.append((task.taskIdentifier, value))
                order.append((task.taskIdentifier, "metrics"))
            }
            harness.manager.taskDidComplete = { task, _ in order.append((task.taskIdentifier, "complete")) }
            let before = Date()
            var ids: [Int] = []
            for _ in 0..<3 {
                let (task, wait) = harness.makeTask(ClientHarness.request(base + "/hello"))
                ids.append(task.taskIdentifier)
                task.resume()
                #expect(wait(10)?.status == 200)
            }
            let after = Date()
            #expect(waitUntil(timeout: 5) { metrics.count == 3 })
            Thread.sleep(forTimeInterval: 0.1)
            let seen = metrics.all
            #expect(seen.map(\.id) == ids)
            for (_, value) in seen {
                #expect(value.taskInterval.start >= before.addingTimeInterval(-0.01))
                #expect(value.taskInterval.end <= after.addingTimeInterval(0.01))
                #expect(value.taskInterval.duration < 5)
                #expect(value.redirectCount == 0)
            }
            #expect(seen.map(\.metrics.isReusedConnection) == [false, true, true])
            #expect(order.all.map(\.event) == ["metrics", "complete", "metrics", "complete", "metrics", "complete"])
            harness.finish()
        }

        // MARK: unset

        @Test func unsetHooksAreNotCalledAndCostNothing() throws {
            let nginx = try TestServers.nginx()
            let harness = ClientHarness()
            let calls = Recorder<String>()
            let manager = harness.manager
            manager.taskDidComplete = { _, _ in calls.append("complete") }
            manager.dataTaskDidReceiveResponse = { _, _ in calls.append("response"); return .cancel }
            manager.dataTaskDidReceiveData = { _, _ in calls.append("data") }
            manager.taskDidSendBodyData = { _, _, _, _ in calls.append("sent") }
            manager.taskDidFinishCollectingMetrics = { _, _ in calls.append("metrics") }
            manager.postsTaskNotifications = true
            #expect(manager.hooks.isActive)
            manager.taskDidComplete = nil
            manager.dataTaskDidReceiveResponse = nil
            manager.dataTaskDidReceiveData = nil
            manager.taskDidSendBodyData = nil
            manager.taskDidFinishCollectingMetrics = nil
            manager.postsTaskNotifications = false
            #expect(!manager.hooks.isActive)
            #expect(manager.deliverySnapshot().hooks == nil)
            let outcome = harness.fetch(nginx.baseURL + "/hello", method: .post, body: "x")
            #expect(outcome.status == 405 || outcome.status == 200)
            #expect(harness.fetch(nginx.baseURL + "/hello").text == NginxServer.helloBody)
            Thread.sleep(forTimeInterval: 0.1)
            #expect(calls.all.isEmpty)
            harness.finish()
        }
    }
}
