import Foundation
import HTTPTypes
import Synchronization
import Testing
@_spi(Testing) @testable import UVNetworking

extension EndToEnd {
    /// async/await: values, errors, Decodable, and Swift task cancellation.
    @Suite(.tags(.nginx)) struct AsyncRequests {
        /// httpbin's echo of a GET.
        struct Echo: Decodable, Sendable {
            let url: String
            let args: [String: String]
            let headers: [String: String]
        }

        /// An HTTPSessionManager on httpbin with the JSON serializer, in a leak-checking harness.
        private func makeHarness(_ httpbin: HTTPBinServer) -> (ClientHarness, HTTPSessionManager) {
            makeHarness(httpbin.baseURL, wire: .http1_1)
        }

        private func makeHarness(_ base: String, wire: Wire) -> (ClientHarness, HTTPSessionManager) {
            let harness = wire.harness(makeManager: { configuration in
                HTTPSessionManager(baseURL: URL(string: base), configuration: configuration)
            })
            let manager = harness.manager as! HTTPSessionManager
            manager.responseSerializer = JSONResponseSerializer()
            return (harness, manager)
        }

        @Test(arguments: Wire.allCases) func getReturnsObjectResponseAndData(_ wire: Wire) async throws {
            let (harness, manager) = makeHarness(try wire.httpbinBaseURL(), wire: wire)
            let response = try await manager.get("get", parameters: ["a": "1"], headers: ["X-Test": "yes"])
            #expect(response.statusCode == 200)
            let json = try #require(response.value(as: [String: Any].self))
            #expect((json["args"] as? [String: Any])?["a"] as? String == "1")
            #expect((json["headers"] as? [String: Any])?["X-Test"] as? String == "yes")
            // The body is the bytes the object was parsed from.
            let reparsed = try JSONSerialization.jsonObject(with: response.data) as? [String: Any]
            #expect((reparsed?["url"] as? String) == json["url"] as? String)
            #expect(response.response.headerFields[.contentType] == "application/json")
            #expect(manager.tasks.isEmpty)
            harness.finish()
        }

        @Test(arguments: Wire.allCases) func postSendsParametersInTheBody(_ wire: Wire) async throws {
            let (harness, manager) = makeHarness(try wire.httpbinBaseURL(), wire: wire)
            let response = try await manager.post("post", parameters: ["k": "v w"])
            let json = try #require(response.value as? [String: Any])
            #expect((json["form"] as? [String: Any])?["k"] as? String == "v w")
            let deleted = try await manager.delete("delete", parameters: ["q": "1"])
            #expect(((deleted.value as? [String: Any])?["args"] as? [String: Any])?["q"] as? String == "1")
            let head = try await manager.head("get")
            #expect(head.statusCode == 200 && head.data.isEmpty && head.value == nil)
            harness.finish()
        }

        @Test func responsesCarryMetrics() async throws {
            let nginx = try TestServers.nginx()
            let harness = ClientHarness()
            harness.manager.responseSerializer = HTTPResponseSerializer()
            let before = Date()
            let first = try await harness.manager.data(for: ClientHarness.request(nginx.baseURL + "/hello"))
            let second = try await harness.manager.data(for: ClientHarness.request(nginx.baseURL + "/hello"))
            let after = Date()
            let metrics = try #require(first.metrics)
            #expect(metrics.taskInterval.start >= before && metrics.taskInterval.end <= after)
            #expect(metrics.taskInterval.duration > 0)
            #expect(metrics.isReusedConnection == false)
            #expect(second.metrics?.isReusedConnection == true)
            harness.finish()
        }

        @Test func asyncTasksStillRunTheManagersHooks() async throws {
            let nginx = try TestServers.nginx()
            let harness = ClientHarness()
            harness.manager.responseSerializer = HTTPResponseSerializer()
            let completed = Mutex<[Int]>([])
            let metricsCount = Mutex(0)
            harness.manager.taskDidComplete = { task, error in
                completed.withLock { $0.append(task.taskIdentifier) }
                #expect(error == nil)
            }
            harness.manager.taskDidFinishCollectingMetrics = { _, _ in metricsCount.withLock { $0 += 1 } }
            _ = try await harness.manager.data(for: ClientHarness.request(nginx.baseURL + "/hello"))
            // The caller may resume before the hooks run on the completion queue.
            #expect(waitUntil(timeout: 5) { completed.withLock { $0.count } == 1 })
            #expect(metricsCount.withLock { $0 } == 1)
            harness.finish()
        }

        @Test func dataForRequestUsesTheManagersSerializer() async throws {
            let nginx = try TestServers.nginx()
            let harness = ClientHarness()
            harness.manager.responseSerializer = HTTPResponseSerializer()
            let response = try await harness.manager.data(for: ClientHarness.request(nginx.baseURL + "/hello"))
            #expect(response.data == Data(NginxServer.helloBody.utf8))
            #expect(response.value(as: Data.self) == response.data)
            harness.finish()
        }

        @Test func notFoundThrowsTheStatusErrorWithTheBody() async throws {
            let nginx = try TestServers.nginx()
            let harness = ClientHarness()
            harness.manager.responseSerializer = HTTPResponseSerializer()
            let error = await #expect(throws: NetworkingError.self) {
                try await harness.manager.data(for: ClientHarness.request(nginx.baseURL + "/missing"))
            }
            #expect(error?.code == .unacceptableStatusCode)
            #expect(error?.response?.status.code == 404)
            let body = String(decoding: error?.responseData ?? Data(), as: UTF8.self)
            #expect(body.contains("404 Not Found"))
            #expect(error?.failingURL?.path == "/missing")
            harness.finish()
        }

        @Test func decodesOffTheLoop() async throws {
            let (harness, manager) = makeHarness(try TestServers.httpbin())
            let echo = try await manager.get("get", parameters: ["a": "1"], headers: ["X-Test": "yes"], as: Echo.self)
            #expect(echo.args == ["a": "1"])
            #expect(echo.headers["X-Test"] == "yes")
            // The SessionManager overload, with a decoder of the caller's.
            let decoder = JSONDecoder()
            let again = try await manager.data(for: ClientHarness.request(TestServers.httpbin().baseURL + "/get?b=2"),
                                               as: Echo.self, decoder: decoder)
            #expect(again.args == ["b": "2"])
            harness.finish()
        }

        @Test func decodingFailureThrowsSerializationFailed() async throws {
            let (harness, manager) = makeHarness(try TestServers.httpbin())
            let error = await #expect(throws: NetworkingError.self) {
                try await manager.get("get", as: [Int].self)
            }
            #expect(error?.code == .serializationFailed)
            #expect(error?.underlyingError is DecodingError)
            #expect(error?.responseData?.isEmpty == false)
            // Validation comes first: HTML is not an acceptable content type for JSON.
            let html = await #expect(throws: NetworkingError.self) {
                try await manager.get("html", as: Echo.self)
            }
            #expect(html?.code == .unacceptableContentType)
            // And a rejected status is the status error, not a decoding one.
            let missing = await #expect(throws: NetworkingError.self) {
                try await manager.get("status/404", as: Echo.self)
            }
            #expect(missing?.code == .unacceptableStatusCode)
            harness.finish()
        }

        @Test func cancellingTheSwiftTaskCancelsTheRequestOnce() async throws {
            // Task.sleep's first use opens the runtime's timer descriptor: before the baseline.
            try await Task.sleep(for: .milliseconds(1))
            let (harness, manager) = makeHarness(try TestServers.httpbin())
            let started = monotonicSeconds()
            let call = Task { try await manager.get("delay/3") }
            // Wait until the request is on its way.
            var sessionTask: SessionTask?
            for _ in 0..<200 where sessionTask == nil {
                try await Task.sleep(for: .milliseconds(10))
                sessionTask = manager.tasks.first
            }
            let task = try #require(sessionTask)
            try await Task.sleep(for: .milliseconds(200))
            #expect(task.state == .running)
            call.cancel()
            let result = await call.result
            let error = try #require(result.failure as? NetworkingError)
            #expect(error.code == .cancelled)
            #expect(monotonicSeconds() - started < 2.5, "the cancellation did not cut the 3 s delay short")
            #expect(task.state == .completed)
            #expect((task.error as? NetworkingError)?.code == .cancelled)
            #expect(manager.tasks.isEmpty)
            harness.finish()
        }

        @Test func cancelledBeforeTheRequestStartsThrowsCancelled() async throws {
            let (harness, manager) = makeHarness(try TestServers.httpbin())
            let call = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await manager.get("delay/3")
            }
            let started = monotonicSeconds()
            let error = try #require(await call.result.failure as? NetworkingError)
            #expect(error.code == .cancelled)
            #expect(monotonicSeconds() - started < 1)
            #expect(manager.tasks.isEmpty)
            #expect(manager.openConnectionCount == 0, "a cancelled-before-start request opened a connection")
            harness.finish()
        }
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
