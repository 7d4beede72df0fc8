import Foundation
import Synchronization
import Testing
@testable import UVNetworking

extension EndToEnd {
    /// AFHTTPSessionManager's verbs against httpbin: URLs from the base URL, parameters where
    /// AFNetworking puts them, header overrides, auth, and success/failure called exactly once.
    @Suite(.tags(.nginx)) struct HTTPSessionManagerVerbs {
        /// What one verb call delivered.
        struct Result: @unchecked Sendable {
            var task: DataTask?
            var returnedTask: DataTask?
            var object: Any?
            var error: (any Error)?
            var calls = 0
            var json: [String: Any]? { object as? [String: Any] }
            var code: NetworkingError.Code? { (error as? NetworkingError)?.code }
        }

        /// A manager on httpbin's base URL inside a harness that checks for leaks at the end.
        private func makeHarness(_ httpbin: HTTPBinServer) -> (ClientHarness, HTTPSessionManager) {
            makeHarness(httpbin.baseURL, wire: .http1_1)
        }

        private func makeHarness(_ base: String, wire: Wire) -> (ClientHarness, HTTPSessionManager) {
            let harness = wire.harness(makeManager: { configuration in
                HTTPSessionManager(baseURL: URL(string: base + "/anything/../"), configuration: configuration)
            })
            let manager = harness.manager as! HTTPSessionManager
            manager.responseSerializer = JSONResponseSerializer()
            return (harness, manager)
        }

        /// Calls one verb and waits for its success or failure.
        private func call(_ start: (@escaping HTTPSessionManager.Success, @escaping HTTPSessionManager.Failure) -> DataTask?,
                          sourceLocation: SourceLocation = #_sourceLocation) -> Result {
            let result = Mutex(Result())
            let done = DispatchSemaphore(value: 0)
            let returned = start({ task, object in
                result.withLock { $0.task = task; $0.object = object; $0.calls += 1 }
                done.signal()
            }, { task, error in
                result.withLock { $0.task = task; $0.error = error; $0.calls += 1 }
                done.signal()
            })
            #expect(done.wait(timeout: .now() + 30) == .success, "neither success nor failure ran", sourceLocation: sourceLocation)
            Thread.sleep(forTimeInterval: 0.01)  // room for a wrong second call to show itself
            var final = result.withLock { $0 }
            final.returnedTask = returned
            #expect(final.calls == 1, sourceLocation: sourceLocation)
            return final
        }

        @Test func getPutsSortedParametersInTheQueryRelativeToTheBaseURL() throws {
            let (harness, manager) = makeHarness(try TestServers.httpbin())
            let got = call { manager.get("get?z=0", parameters: ["b": "2 3", "a": ["x", "y"]], success: $0, failure: $1) }
            #expect(got.error == nil)
            #expect(got.task === got.returnedTask)
            #expect((got.json?["url"] as? String)?.hasSuffix("/get?z=0&a%5B%5D=x&a%5B%5D=y&b=2%203") == true)
            #expect((got.json?["args"] as? [String: Any])?["b"] as? String == "2 3")
            harness.finish()
        }

        @Test func bodyVerbsSendAFormAndDeleteUsesTheQuery() throws {
            let (harness, manager) = makeHarness(try TestServers.httpbin())
            let parameters: [String: Any] = ["name": "a&b", "n": 1]
            for (verb, start) in [
                ("post", { manager.post("post", parameters: parameters, success: $0, failure: $1) }),
                ("put", { manager.put("put", parameters: parameters, success: $0, failure: $1) }),
                ("patch", { manager.patch("patch", parameters: parameters, success: $0, failure: $1) }),
            ] as [(String, (@escaping HTTPSessionManager.Success, @escaping HTTPSessionManager.Failure) -> DataTask?)] {
                let sent = call(start)
                #expect(sent.error == nil, "\(verb)")
                #expect((sent.json?["form"] as? [String: Any])?["name"] as? String == "a&b", "\(verb)")
                #expect((sent.json?["form"] as? [String: Any])?["n"] as? String == "1", "\(verb)")
                #expect((sent.json?["headers"] as? [String: Any])?["Content-Type"] as? String == "application/x-www-form-urlencoded", "\(verb)")
            }
            let deleted = call { manager.delete("delete", parameters: ["id": "7"], success: $0, failure: $1) }
            #expect((deleted.json?["args"] as? [String: Any])?["id"] as? String == "7")
            #expect((deleted.json?["form"] as? [String: Any])?.isEmpty ?? true)
            harness.finish()
        }

        @Test func jsonRequestSerializerSendsJSON() throws {
            let (harness, manager) = makeHarness(try TestServers.httpbin())
            manager.requestSerializer = JSONRequestSerializer()
            let sent = call { manager.post("post", parameters: ["list": [1, 2], "ok": true], success: $0, failure: $1) }
            let json = sent.json?["json"] as? [String: Any]
            #expect(json?["list"] as? [Int] == [1, 2])
            #expect((sent.json?["headers"] as? [String: Any])?["Content-Type"] as? String == "application/json")
            harness.finish()
        }

        @Test func perRequestHeadersOverrideTheSerializersDefaults() throws {
            let (harness, manager) = makeHarness(try TestServers.httpbin())
            manager.requestSerializer.setValue("default", forHTTPHeaderField: "X-Choice")
            let sent = call { manager.get("headers", headers: ["X-Choice": "mine", "User-Agent": "custom/1"], success: $0, failure: $1) }
            let headers = sent.json?["headers"] as? [String: Any]
            #expect(headers?["X-Choice"] as? String == "mine")
            #expect(headers?["User-Agent"] as? String == "custom/1")
            let defaults = call { manager.get("headers", success: $0, failure: $1) }
            let defaultHeaders = defaults.json?["headers"] as? [String: Any]
            #expect(defaultHeaders?["X-Choice"] as? String == "default")
            #expect((defaultHeaders?["Accept-Language"] as? String)?.contains("q=1") == true)
            harness.finish()
        }

        @Test func headSucceedsWithTheTaskOnly() throws {
            let (harness, manager) = makeHarness(try TestServers.httpbin())
            let result = Mutex<(DataTask?, Int)>((nil, 0))
            let done = DispatchSemaphore(value: 0)
            let returned = manager.head("get", success: { task in
                result.withLock { $0 = (task, $0.1 + 1) }
                done.signal()
            }, failure: { _, error in
                Issue.record("HEAD failed: \(error)")
                done.signal()
            })
            #expect(done.wait(timeout: .now() + 30) == .success)
            #expect(result.withLock { $0.0 } === returned)
            #expect(returned?.response?.status.code == 200)
            harness.finish()
        }

        @Test func noContentIsSuccessWithoutAnObject() throws {
            let (harness, manager) = makeHarness(try TestServers.httpbin())
            let result = call { manager.get("status/204", success: $0, failure: $1) }
            #expect(result.error == nil)
            #expect(result.object == nil)
            harness.finish()
        }

        @Test(arguments: Wire.allCases) func basicAuthorizationFromTheSerializer(_ wire: Wire) throws {
            let (harness, manager) = makeHarness(try wire.httpbinBaseURL(), wire: wire)
            let unauthorized = call { manager.get("basic-auth/user/passwd", success: $0, failure: $1) }
            #expect(unauthorized.code == .unacceptableStatusCode)
            #expect(unauthorized.task != nil)
            #expect((unauthorized.error as? NetworkingError)?.response?.status.code == 401)
            let hiddenWithout = call { manager.get("hidden-basic-auth/user/passwd", success: $0, failure: $1) }
            #expect((hiddenWithout.error as? NetworkingError)?.response?.status.code == 404)

            manager.requestSerializer.setAuthorizationHeaderField(username: "user", password: "passwd")
            let authorized = call { manager.get("basic-auth/user/passwd", success: $0, failure: $1) }
            #expect(authorized.json?["authenticated"] as? Bool == true)
            let hidden = call { manager.get("hidden-basic-auth/user/passwd", success: $0, failure: $1) }
            #expect(hidden.json?["user"] as? String == "user")

            manager.requestSerializer.clearAuthorizationHeader()
            let cleared = call { manager.get("basic-auth/user/passwd", success: $0, failure: $1) }
            #expect((cleared.error as? NetworkingError)?.response?.status.code == 401)
            harness.finish()
        }

        @Test func aRequestThatDoesNotSerializeMakesNoTaskAndFailsLater() throws {
            let (harness, manager) = makeHarness(try TestServers.httpbin())
            manager.requestSerializer = JSONRequestSerializer()
            // Failing "later" means on the completion queue, not inside the call on this thread.
            let key = DispatchSpecificKey<Int>()
            harness.queue.setSpecific(key: key, value: 1)
            let onCompletionQueue = Mutex(false)
            let result = call { success, failure in
                // `as [String: Any]`: JSONSerialization refuses a Date (a literal of Encodable values
                // would take the Encodable overload, whose JSONEncoder writes one).
                manager.post("post", parameters: ["when": Date()] as [String: Any], success: success, failure: { task, error in
                    onCompletionQueue.withLock { $0 = DispatchQueue.getSpecific(key: key) == 1 }
                    failure(task, error)
                })
            }
            #expect(result.returnedTask == nil)
            #expect(result.task == nil)
            #expect(result.code == .requestSerializationFailed)
            #expect(onCompletionQueue.withLock { $0 })
            #expect(manager.tasks.isEmpty)
            // The same for Encodable parameters: JSONEncoder refuses NaN.
            let encodable = call { manager.post("post", parameters: ["x": Double.nan], success: $0, failure: $1) }
            #expect(encodable.returnedTask == nil)
            #expect(encodable.task == nil)
            #expect(encodable.code == .requestSerializationFailed)
            #expect(manager.tasks.isEmpty)
            harness.finish()
        }

        @Test func anUnresolvableURLStringFailsWithoutATask() throws {
            let (harness, manager) = makeHarness(try TestServers.httpbin())
            let result = call { manager.get("http://[::1", success: $0, failure: $1) }
            #expect(result.returnedTask == nil)
            #expect(result.code == .invalidURL)
            harness.finish()
        }

        @Test func unstartedTaskWaitsForResume() throws {
            let (harness, manager) = makeHarness(try TestServers.httpbin())
            let done = DispatchSemaphore(value: 0)
            let task = manager.dataTask(httpMethod: .get, urlString: "get", success: { _, _ in done.signal() }, failure: { _, _ in done.signal() })
            #expect(task?.state == .suspended)
            #expect(done.wait(timeout: .now() + 0.2) == .timedOut)
            task?.resume()
            #expect(done.wait(timeout: .now() + 30) == .success)
            harness.finish()
        }
    }
}
