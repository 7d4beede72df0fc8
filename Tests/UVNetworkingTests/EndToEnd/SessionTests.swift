import Foundation
import Synchronization
import Testing
@testable import UVNetworking

extension EndToEnd {
    /// The session manager's contract: completion queue and group, task listing, progress, bad
    /// input, serializers, and address handling.
    @Suite(.tags(.nginx)) struct Session {
        @Test func completionGroupNotifiesAfterEveryCompletion() throws {
            let nginx = try TestServers.nginx()
            let harness = ClientHarness()
            let group = DispatchGroup()
            harness.manager.completionGroup = group
            let completed = Mutex(0)
            for _ in 0..<50 {
                harness.manager.dataTask(with: ClientHarness.request(nginx.baseURL + "/hello"), completionHandler: { _, _, _ in
                    Thread.sleep(forTimeInterval: 0.001)
                    completed.withLock { $0 += 1 }
                }).resume()
            }
            #expect(completionsCountedWhenGroupNotifies(harness.manager, group, { completed.withLock { $0 } }) == 50)
            harness.finish()
        }

        @Test func completionRunsOnTheConfiguredQueue() throws {
            let nginx = try TestServers.nginx()
            let harness = ClientHarness()
            let key = DispatchSpecificKey<Int>()
            harness.queue.setSpecific(key: key, value: 7)
            let onQueue = Mutex(false)
            let done = DispatchSemaphore(value: 0)
            harness.manager.dataTask(with: ClientHarness.request(nginx.baseURL + "/hello"), completionHandler: { _, _, _ in
                onQueue.withLock { $0 = DispatchQueue.getSpecific(key: key) == 7 }
                done.signal()
            }).resume()
            #expect(done.wait(timeout: .now() + 10) == .success)
            #expect(onQueue.withLock { $0 })
            harness.finish()
        }

        @Test func nilCompletionQueueMeansTheMainQueue() async throws {
            let nginx = try TestServers.nginx()
            let harness = ClientHarness()
            harness.manager.completionQueue = nil
            // Under an async main, the main queue may be drained by a thread other than the
            // process's first one, so ask the queue, not the thread.
            let key = DispatchSpecificKey<String>()
            DispatchQueue.main.setSpecific(key: key, value: "main")
            let onMain: Bool = await withCheckedContinuation { continuation in
                harness.manager.dataTask(with: ClientHarness.request(nginx.baseURL + "/hello"), completionHandler: { _, _, _ in
                    continuation.resume(returning: DispatchQueue.getSpecific(key: key) == "main")
                }).resume()
            }
            #expect(onMain)
            harness.finish()
        }

        @Test func tasksAreCreatedSuspendedAndListedUntilTheyComplete() throws {
            let nginx = try TestServers.nginx()
            let harness = ClientHarness()
            let (task, wait) = harness.makeTask(ClientHarness.request(nginx.baseURL + "/hello"))
            #expect(task.state == .suspended)
            #expect(harness.manager.tasks.map(\.taskIdentifier) == [task.taskIdentifier])
            #expect(harness.manager.dataTasks.count == 1)
            task.resume()
            #expect(wait(10)?.status == 200)
            #expect(task.state == .completed)
            #expect(harness.manager.tasks.isEmpty)
            #expect(task.response?.status == 200)
            #expect(task.countOfBytesReceived == 12)
            #expect(task.countOfBytesExpectedToReceive == 12)
            harness.finish()
        }

        @Test func uploadAndDownloadProgressReachOne() throws {
            let nginx = try TestServers.nginx()
            let harness = ClientHarness()
            let lastDownload = Mutex(0.0)
            let lastUpload = Mutex(0.0)
            let done = DispatchSemaphore(value: 0)
            // A server that reads the body before it answers: one that answers first ends the
            // upload there (an early response), short of the total.
            let reader = try ScriptedServer { connection in
                try connection.serveKeepAlive(idleTimeout: 10) { _ in ScriptedResponse.text("read") }
            }
            defer { reader.stop() }
            let body = Data(repeating: 0x61, count: 100_000)
            var request = Request(url: URL(string: "http://127.0.0.1:\(reader.port)/")!, method: .post, body: body)
            request.setValue("text/plain", forHTTPHeaderField: "Content-Type")
            let upload = harness.manager.dataTask(with: request, uploadProgress: { progress in
                lastUpload.withLock { $0 = progress.fractionCompleted }
            }, completionHandler: { _, _, _ in done.signal() })
            upload.resume()
            #expect(done.wait(timeout: .now() + 10) == .success)
            #expect(upload.uploadProgress.fractionCompleted == 1.0)
            #expect(lastUpload.withLock { $0 } == 1.0)

            let download = harness.manager.dataTask(with: ClientHarness.request(nginx.baseURL + "/large"), downloadProgress: { progress in
                lastDownload.withLock { $0 = progress.fractionCompleted }
            }, completionHandler: { _, _, _ in done.signal() })
            download.resume()
            #expect(done.wait(timeout: .now() + 10) == .success)
            #expect(download.downloadProgress.fractionCompleted == 1.0)
            #expect(download.downloadProgress.totalUnitCount == Int64(NginxServer.largeSize))
            reader.stop()
            harness.finish()
        }

        @Test func invalidHeaderBytesFailWithoutSendingAnything() throws {
            let harness = ClientHarness()
            let server = try ScriptedServer { connection in
                try connection.serveKeepAlive { _ in ScriptedResponse.text("ok") }
            }
            let base = "http://127.0.0.1:\(server.port)/"
            for (name, value) in [("X-Evil", "a\r\nInjected: yes"), ("X-Nul", "a\u{0}b"), ("Bad Name", "v"), ("X-LF", "a\nb")] {
                let outcome = harness.fetch(base, fields: [(name, value)])
                #expect(outcome.code == .invalidRequestHeader)
                #expect(outcome.response == nil)
            }
            #expect(server.acceptedCount == 0)
            #expect(harness.fetch(base, fields: [("X-Fine", "tab\tand spaces")]).text == "ok")
            server.stop()
            harness.finish()
        }

        @Test func additionalHeadersFromTheConfigurationYieldToTheRequestsOwn() throws {
            let harness = ClientHarness { $0.httpAdditionalHeaders = [("X-App", "default"), ("X-Both", "default")] }
            let server = try ScriptedServer { connection in
                try connection.serveKeepAlive { request in
                    ScriptedResponse.text("\(request.headerValues("X-App"))|\(request.headerValues("X-Both"))")
                }
            }
            let outcome = harness.fetch("http://127.0.0.1:\(server.port)/", fields: [("x-both", "mine")])
            #expect(outcome.text == "[\"default\"]|[\"mine\"]")
            server.stop()
            harness.finish()
        }

        @Test(arguments: ["http://:80/", "http://host:99999/", "http://[::1/", "http://a b/"])
        func malformedURLsFailClearly(url: String) throws {
            let harness = ClientHarness()
            if let parsed = URL(string: url) {
                #expect(harness.fetch(Request(url: parsed)).code == .invalidURL)
            }
            harness.finish()
        }

        @Test func unsupportedSchemes() throws {
            let harness = ClientHarness()
            #expect(harness.fetch(Request(url: URL(string: "ftp://127.0.0.1/")!)).code == .unsupportedURL)
            #expect(harness.fetch(Request(url: URL(string: "gopher://127.0.0.1/")!)).code == .unsupportedURL)
            // https is spoken: nothing listens on port 1, so the connect fails, not the scheme.
            #expect(harness.fetch(Request(url: URL(string: "https://127.0.0.1:1/")!)).code == .connectionRefused)
            harness.finish()
        }

        @Test func ipv6Loopback() throws {
            let harness = ClientHarness()
            let server = try ScriptedServer(ipv6: true) { connection in
                try connection.serveKeepAlive { request in ScriptedResponse.text(request.header("Host") ?? "") }
            }
            #expect(harness.fetch("http://[::1]:\(server.port)/").text == "[::1]:\(server.port)")
            server.stop()
            harness.finish()
        }

        @Test func hostNamesResolveAndEveryAddressIsTried() throws {
            // "localhost" may resolve to ::1 first; the server listens on 127.0.0.1 only, so the
            // client must move on to the next address after a refusal.
            let harness = ClientHarness()
            let server = try ScriptedServer { connection in
                try connection.serveKeepAlive { _ in ScriptedResponse.text("found") }
            }
            #expect(harness.fetch("http://localhost:\(server.port)/").text == "found")
            server.stop()
            harness.finish()
        }

        @Test func unknownHostIsADNSFailure() throws {
            let harness = ClientHarness()
            // .invalid is reserved (RFC 2606): it never resolves, and no packet leaves the machine
            // for it with a stub resolver that has no upstream.
            let outcome = harness.fetch("http://no-such-host.invalid/")
            #expect(outcome.code == .dnsFailure)
            harness.finish()
        }

        @Test(arguments: Wire.allCases) func httpbinJSONWithTheDefaultSerializer(_ wire: Wire) throws {
            let base = try wire.httpbinBaseURL()
            let harness = wire.harness()
            harness.manager.responseSerializer = JSONResponseSerializer()
            let outcome = harness.fetch(base + "/get?x=1", fields: [("X-Test", "yes")])
            let json = outcome.object as? [String: Any]
            #expect((json?["args"] as? [String: Any])?["x"] as? String == "1")
            #expect((json?["headers"] as? [String: Any])?["X-Test"] as? String == "yes")

            let posted = harness.fetch(base + "/post", method: .post, fields: [("Content-Type", "text/plain")], body: "payload")
            #expect((posted.object as? [String: Any])?["data"] as? String == "payload")

            let missing = harness.fetch(base + "/status/418")
            #expect(missing.code == .unacceptableStatusCode)
            #expect((missing.error as? NetworkingError)?.response?.status.code == 418)
            #expect((missing.error as? NetworkingError)?.responseData?.isEmpty == false)
            harness.finish()
        }

        @Test(arguments: Wire.allCases, ["GET", "POST", "PUT", "PATCH", "DELETE"])
        func httpbinMethods(_ wire: Wire, method: String) throws {
            let base = try wire.httpbinBaseURL()
            let harness = wire.harness()
            harness.manager.responseSerializer = JSONResponseSerializer()
            let outcome = harness.fetch(base + "/" + method.lowercased(), method: .init(method)!,
                                        body: method == "GET" || method == "DELETE" ? nil : "b=1")
            #expect(outcome.status == 200)
            wire.expectSpoken(outcome)
            #expect(outcome.object is [String: Any])
            harness.finish()
        }
    }
}
