import Dispatch
import Foundation
import HTTPTypes
import Synchronization
import Testing
@testable import UVNetworking

extension EndToEnd {
    /// A trailing closure given to a task-making call is its completion handler, for every family
    /// (data, upload, download, the HTTP manager's tasks and verbs): written as users write it,
    /// it compiles only if Swift binds it there, and it runs once with the response.
    @Suite(.tags(.loopback)) struct TrailingClosures {
        /// Counts a completion handler's calls and keeps the first one's response.
        final class Calls: Sendable {
            let count = Mutex(0)
            let status = Mutex<Int?>(nil)
            let text = Mutex<String?>(nil)
            let done = DispatchSemaphore(value: 0)

            func record(_ response: HTTPResponse?, _ body: String?) {
                let first = count.withLock { count -> Bool in
                    count += 1
                    return count == 1
                }
                guard first else { return }
                status.withLock { $0 = response?.status.code }
                text.withLock { $0 = body }
                done.signal()
            }

            /// Waits for the first call, then a moment for a wrong second one.
            func expectOnce(status expected: Int = 200, text expectedText: String? = nil,
                            sourceLocation: SourceLocation = #_sourceLocation) {
                #expect(done.wait(timeout: .now() + 30) == .success, "the completion handler never ran", sourceLocation: sourceLocation)
                Thread.sleep(forTimeInterval: 0.05)
                #expect(count.withLock { $0 } == 1, sourceLocation: sourceLocation)
                #expect(status.withLock { $0 } == expected, sourceLocation: sourceLocation)
                if let expectedText { #expect(text.withLock { $0 } == expectedText, sourceLocation: sourceLocation) }
            }
        }

        /// Answers every request with its method and target, so a test sees which request came.
        private func echoServer() throws -> ScriptedServer {
            try ScriptedServer { connection in
                try connection.serveKeepAlive { request in
                    ScriptedResponse.text("\(request.method) \(request.target) \(request.body.count)")
                }
            }
        }

        private func text(_ object: Any?) -> String? {
            (object as? Data).map { String(decoding: $0, as: UTF8.self) }
        }

        @Test func dataTaskTrailingClosureIsTheCompletionHandler() throws {
            let server = try echoServer()
            defer { server.stop() }
            let harness = ClientHarness()
            let calls = Calls()
            let request = Request(url: URL(string: "http://127.0.0.1:\(server.port)/data")!)
            let task = harness.manager.dataTask(with: request) { response, object, error in
                calls.record(response, self.text(object))
            }
            task.resume()
            calls.expectOnce(text: "GET /data 0")
            // With a progress closure labelled, the trailing one is still the completion handler.
            let second = Calls()
            harness.manager.dataTask(with: request, downloadProgress: { _ in }) { response, object, _ in
                second.record(response, self.text(object))
            }.resume()
            second.expectOnce(text: "GET /data 0")
            harness.finish()
        }

        @Test func uploadTaskTrailingClosureIsTheCompletionHandler() throws {
            let server = try echoServer()
            defer { server.stop() }
            let harness = ClientHarness()
            let request = Request(url: URL(string: "http://127.0.0.1:\(server.port)/up")!, method: .put)

            let fromData = Calls()
            harness.manager.uploadTask(with: request, from: Data("12345".utf8)) { response, object, _ in
                fromData.record(response, self.text(object))
            }.resume()
            fromData.expectOnce(text: "PUT /up 5")

            let file = FileManager.default.temporaryDirectory.appendingPathComponent("uvnetworking-trailing-\(UUID().uuidString)")
            try Data("123".utf8).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let fromFile = Calls()
            harness.manager.uploadTask(with: request, fromFile: file) { response, object, _ in
                fromFile.record(response, self.text(object))
            }.resume()
            fromFile.expectOnce(text: "PUT /up 3")

            var streamed = request
            streamed.bodyStream = StreamedBody(length: 2, inputStream: { InputStream(data: Data("ab".utf8)) })
            let fromStream = Calls()
            harness.manager.uploadTask(withStreamedRequest: streamed) { response, object, _ in
                fromStream.record(response, self.text(object))
            }.resume()
            fromStream.expectOnce(text: "PUT /up 2")
            harness.finish()
        }

        @Test func downloadTaskTrailingClosureIsTheCompletionHandler() throws {
            let server = try echoServer()
            defer { server.stop() }
            let harness = ClientHarness()
            let calls = Calls()
            let request = Request(url: URL(string: "http://127.0.0.1:\(server.port)/file")!)
            harness.manager.downloadTask(with: request) { response, file, _ in
                calls.record(response, file.flatMap { try? String(contentsOf: $0, encoding: .utf8) })
            }.resume()
            calls.expectOnce(text: "GET /file 0")
            // A throwing maker: checked here only for the binding (junk resume data throws first).
            #expect(throws: NetworkingError.self) {
                _ = try harness.manager.downloadTask(withResumeData: Data("junk".utf8)) { _, _, _ in }
            }
            harness.finish()
        }

        @Test func httpManagerTasksAndVerbsTakeTrailingSuccessAndFailure() throws {
            let server = try echoServer()
            defer { server.stop() }
            let manager = HTTPSessionManager(baseURL: URL(string: "http://127.0.0.1:\(server.port)/"))
            manager.completionQueue = DispatchQueue(label: "uvnetworking.tests.trailing")
            manager.responseSerializer = HTTPResponseSerializer()
            defer { manager.invalidateSessionCancelingTasks(true, resetSession: false) }

            let task = Calls()
            manager.dataTask(httpMethod: .get, urlString: "task") { dataTask, object in
                task.record(dataTask.response, self.text(object))
            } failure: { _, error in
                Issue.record("failed: \(error)")
            }?.resume()
            task.expectOnce(text: "GET /task 0")

            let get = Calls()
            manager.get("get") { dataTask, object in
                get.record(dataTask.response, self.text(object))
            } failure: { _, error in
                Issue.record("failed: \(error)")
            }
            get.expectOnce(text: "GET /get 0")

            let post = Calls()
            manager.post("post", parameters: ["a": "b"]) { dataTask, object in
                post.record(dataTask.response, self.text(object))
            } failure: { _, error in
                Issue.record("failed: \(error)")
            }
            post.expectOnce(text: "POST /post 3")

            // Multipart: the body-building closure trails the URL, then success and failure.
            let multipart = Calls()
            manager.post("form") { form in
                form.appendPart(withForm: Data("v".utf8), name: "k")
            } success: { dataTask, object in
                multipart.record(dataTask.response, self.text(object).map { String($0.prefix(11)) })
            } failure: { _, error in
                Issue.record("failed: \(error)")
            }
            multipart.expectOnce(text: "POST /form ")

            let head = Calls()
            manager.head("head") { dataTask in
                head.record(dataTask.response, nil)
            } failure: { _, error in
                Issue.record("failed: \(error)")
            }
            head.expectOnce()
        }
    }
}
