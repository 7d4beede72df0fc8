import Foundation
import Synchronization
import Testing
@_spi(Testing) @testable import UVNetworking

extension EndToEnd {
    /// Connection reuse and the rules that forbid it.
    @Suite(.tags(.nginx)) struct KeepAlive {
        @Test func sequentialRequestsToNginxReuseOneConnection() throws {
            let nginx = try TestServers.nginx()
            let harness = ClientHarness()
            for _ in 0..<20 {
                let outcome = harness.fetch(nginx.baseURL + "/hello")
                #expect(outcome.status == 200)
                #expect(outcome.text == "hello world\n")
            }
            #expect(harness.manager.openConnectionCount == 1)
            harness.finish()
        }

        @Test func scriptedServerSeesOneConnectionForManyRequests() throws {
            let harness = ClientHarness()
            let server = try ScriptedServer { connection in
                try connection.serveKeepAlive { _ in ScriptedResponse.text("ok") }
            }
            for _ in 0..<5 { #expect(harness.fetch("http://127.0.0.1:\(server.port)/").text == "ok") }
            #expect(server.acceptedCount == 1)
            server.stop()
            harness.finish()
        }

        @Test func connectionCloseFromTheServerIsHonoured() throws {
            let harness = ClientHarness()
            let server = try ScriptedServer { connection in
                _ = try connection.readRequest()
                try connection.write(ScriptedResponse.text("bye", headers: [("Connection", "close")]))
                _ = connection.waitForPeerClose(timeout: 5)
            }
            for _ in 0..<3 { #expect(harness.fetch("http://127.0.0.1:\(server.port)/").text == "bye") }
            #expect(server.acceptedCount == 3)
            server.stop()
            harness.finish()
        }

        @Test func http10ResponsesAreNotReusedUnlessTheyAskForKeepAlive() throws {
            let harness = ClientHarness()
            let server = try ScriptedServer { connection in
                try connection.serveKeepAlive { request in
                    if request.target == "/keep" {
                        return "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 4\r\n\r\nkeep"
                    }
                    return "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nhi"
                }
            }
            let base = "http://127.0.0.1:\(server.port)"
            #expect(harness.fetch(base + "/").text == "hi")
            #expect(harness.fetch(base + "/").text == "hi")
            #expect(server.acceptedCount == 2)
            #expect(harness.fetch(base + "/keep").text == "keep")
            #expect(harness.fetch(base + "/keep").text == "keep")
            #expect(server.acceptedCount == 3)
            server.stop()
            harness.finish()
        }

        @Test func http10EOFFramedBody() throws {
            let harness = ClientHarness()
            let server = try ScriptedServer { connection in
                _ = try connection.readRequest()
                try connection.write("HTTP/1.0 200 OK\r\n\r\nuntil the end")
                connection.close()
            }
            let outcome = harness.fetch("http://127.0.0.1:\(server.port)/")
            #expect(outcome.error == nil)
            #expect(outcome.text == "until the end")
            server.stop()
            harness.finish()
        }

        @Test func staleKeepAliveConnectionIsRetriedOnceForIdempotentRequests() throws {
            let harness = ClientHarness()
            // The first connection answers once, then closes as the second request arrives: the
            // race between a server's idle close and our reuse. The retry goes to a new connection.
            let server = try ScriptedServer { connection in
                let first = try connection.readRequest()
                if first.target == "/fresh" {
                    try connection.write(ScriptedResponse.text("retried"))
                    _ = connection.waitForPeerClose(timeout: 5)
                    return
                }
                try connection.write(ScriptedResponse.text("first"))
                _ = try connection.readRequest()
                connection.close()
            }
            let base = "http://127.0.0.1:\(server.port)"
            #expect(harness.fetch(base + "/").text == "first")
            // The retry reads "/": the script answers a second connection's first request normally.
            let retried = harness.fetch(base + "/")
            #expect(retried.error == nil)
            #expect(retried.text == "first")
            #expect(server.acceptedCount == 2)
            server.stop()
            harness.finish()
        }

        @Test func staleConnectionFailureIsNotRetriedForPOST() throws {
            let harness = ClientHarness()
            let server = try ScriptedServer { connection in
                _ = try connection.readRequest()
                try connection.write(ScriptedResponse.text("first"))
                _ = try connection.readRequest()
                connection.close()
            }
            let base = "http://127.0.0.1:\(server.port)"
            #expect(harness.fetch(base + "/", method: .post, body: "a").text == "first")
            let failed = harness.fetch(base + "/", method: .post, body: "b")
            #expect(failed.code == .connectionClosed)
            #expect(server.acceptedCount == 1)
            server.stop()
            harness.finish()
        }

        @Test func serverClosingAnIdleConnectionIsNoticedAndTheNextRequestUsesANewOne() throws {
            let nginx = try TestServers.nginx()
            let harness = ClientHarness()
            #expect(harness.fetch(nginx.baseURL + "/idle-close").status == 200)
            // nginx closes this location's idle connections after 1 s.
            #expect(waitUntil(timeout: 5) { harness.manager.openConnectionCount == 0 })
            #expect(harness.fetch(nginx.baseURL + "/idle-close").status == 200)
            harness.finish()
        }

        @Test func idleConnectionsCloseAfterTheIdleConnectionTimeout() throws {
            let harness = ClientHarness { $0.idleConnectionTimeout = 0.3 }
            let closedByClient = DispatchSemaphore(value: 0)
            let server = try ScriptedServer { connection in
                _ = try connection.readRequest()
                try connection.write(ScriptedResponse.text("once"))
                if connection.waitForPeerClose(timeout: 10) { closedByClient.signal() }
            }
            let started = monotonicSeconds()
            #expect(harness.fetch("http://127.0.0.1:\(server.port)/").text == "once")
            #expect(harness.manager.openConnectionCount == 1)
            #expect(closedByClient.wait(timeout: .now() + 5) == .success)
            let waited = monotonicSeconds() - started
            #expect(waited >= 0.25 && waited < 3, "closed after \(waited) s")
            #expect(harness.manager.openConnectionCount == 0)
            server.stop()
            harness.finish()
        }

        @Test func serverThatClosesEveryConnectionAfterOneResponse() throws {
            let nginx = try TestServers.nginx()
            let harness = ClientHarness { $0.maximumConnectionsPerHost = 8 }
            let outcomes = Mutex<[Int]>([])
            let group = DispatchGroup()
            for _ in 0..<500 {
                group.enter()
                harness.manager.dataTask(with: ClientHarness.request(nginx.baseURL + "/close"), completionHandler: { response, _, error in
                    outcomes.withLock { $0.append(error == nil ? (response?.status.code ?? -1) : -2) }
                    group.leave()
                }).resume()
            }
            #expect(group.wait(timeout: .now() + 60) == .success)
            let results = outcomes.withLock { $0 }
            #expect(results.count == 500)
            #expect(results.allSatisfy { $0 == 200 })
            harness.finish()
        }

        @Test func tenThousandTasksThroughA64ConnectionPool() throws {
            let harness = ClientHarness { $0.maximumConnectionsPerHost = 64 }
            let server = try ScriptedServer { connection in
                try connection.serveKeepAlive { request in ScriptedResponse.text(request.target) }
            }
            let count = 10_000
            let calls = Mutex([Int](repeating: 0, count: count))
            let wrong = Mutex(0)
            let group = DispatchGroup()
            for index in 0..<count {
                group.enter()
                let url = "http://127.0.0.1:\(server.port)/\(index)"
                harness.manager.dataTask(with: ClientHarness.request(url), completionHandler: { _, object, error in
                    if error != nil || (object as? Data).map({ String(decoding: $0, as: UTF8.self) }) != "/\(index)" {
                        wrong.withLock { $0 += 1 }
                    }
                    calls.withLock { $0[index] += 1 }
                    group.leave()
                }).resume()
            }
            #expect(group.wait(timeout: .now() + 120) == .success)
            // A second call of any handler would show up here (and unbalance the group).
            Thread.sleep(forTimeInterval: 0.2)
            #expect(calls.withLock { $0.allSatisfy { $0 == 1 } })
            #expect(wrong.withLock { $0 } == 0)
            #expect(server.maxConcurrentConnections <= 64)
            #expect(server.acceptedCount <= 64)
            server.stop()
            harness.finish()
        }
    }
}
