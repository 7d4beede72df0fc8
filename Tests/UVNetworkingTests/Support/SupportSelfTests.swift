// Tests of the test-support layer itself, so an end-to-end failure can be trusted to be the
// library's fault and not the harness's.

#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import Testing

@Suite("Test support: ScriptedServer", .tags(.nginx))
struct ScriptedServerSelfTests {
    @Test func answersARawClient() throws {
        let seen = Mutex<ScriptedRequest?>(nil)
        let server = try ScriptedServer { connection in
            let request = try connection.readRequest()
            seen.withLock { $0 = request }
            try connection.write(ScriptedResponse.text("hi", headers: [("X-Test", "1")]))
        }
        defer { server.stop() }

        let client = try RawTCPClient(port: server.port)
        try client.write("POST /upload?x=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello")
        let response = try client.readResponse()
        #expect(response.status == 200)
        #expect(response.header("x-test") == "1")
        #expect(response.bodyText == "hi")
        #expect(client.waitForPeerClose(), "a script that returns closes its connection")

        let request = try #require(seen.withLock { $0 })
        #expect(request.method == "POST")
        #expect(request.target == "/upload?x=1")
        #expect(request.version == "HTTP/1.1")
        #expect(request.header("HOST") == "a")
        #expect(request.bodyText == "hello")
        #expect(request.head == "POST /upload?x=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\n")
        #expect(server.acceptedCount == 1)
    }

    @Test func resetGivesTheClientECONNRESET() throws {
        let server = try ScriptedServer { connection in
            _ = try connection.readRequest()
            connection.reset()
        }
        defer { server.stop() }

        let client = try RawTCPClient(port: server.port)
        try client.write("GET / HTTP/1.1\r\nHost: a\r\n\r\n")
        #expect(throws: LoopbackSocketError.system(call: "recv", errno: ECONNRESET)) {
            try client.readToEOF()
        }
    }

    @Test func closeIsAnOrderlyFINEvenWithUnreadInput() throws {
        let server = try ScriptedServer { connection in
            _ = try connection.readRequestHead()
            try connection.write(ScriptedResponse.text("early"))
            connection.pause(0.1) // Let the body arrive unread: a plain close() would now send RST.
            connection.close()
        }
        defer { server.stop() }

        let client = try RawTCPClient(port: server.port)
        try client.write("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\n")
        try client.write("abc")
        let bytes = try client.readToEOF()
        #expect(String(decoding: bytes, as: UTF8.self).hasSuffix("\r\n\r\nearly"))
    }

    @Test func servesKeepAliveWithChunkedAndPipelinedRequests() throws {
        let server = try ScriptedServer { connection in
            try connection.serveKeepAlive { request in
                ScriptedResponse.text("\(request.method) \(request.target) [\(request.bodyText)]")
            }
        }
        defer { server.stop() }

        let client = try RawTCPClient(port: server.port)
        try client.write("POST /a HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
            + "3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nTrailer: x\r\n\r\n"
            + "GET /b HTTP/1.1\r\nHost: a\r\n\r\n") // Pipelined: both requests in one write.
        #expect(try client.readResponse().bodyText == "POST /a [abcde]")
        #expect(try client.readResponse().bodyText == "GET /b []")
        try client.write("GET /c HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
        #expect(try client.readResponse().bodyText == "GET /c []")
        #expect(client.waitForPeerClose(), "Connection: close ends serveKeepAlive")
        #expect(server.acceptedCount == 1)
    }

    @Test func listensOnIPv6Loopback() throws {
        let server = try ScriptedServer(ipv6: true) { connection in
            _ = try connection.readRequest()
            try connection.write(ScriptedResponse.text("v6"))
        }
        defer { server.stop() }

        let client = try RawTCPClient(port: server.port, ipv6: true)
        try client.write("GET / HTTP/1.1\r\nHost: [::1]\r\n\r\n")
        #expect(try client.readResponse().bodyText == "v6")
    }

    @Test func countsConcurrentConnections() throws {
        let server = try ScriptedServer { connection in
            _ = connection.waitForPeerClose(timeout: 10)
        }
        defer { server.stop() }

        var clients = try (0..<3).map { _ in try RawTCPClient(port: server.port) }
        #expect(waitUntil(timeout: 5) { server.openConnectionCount == 3 })
        clients.forEach { $0.close() }
        #expect(waitUntil(timeout: 5) { server.openConnectionCount == 0 })
        clients.removeAll()
        let another = try RawTCPClient(port: server.port)
        #expect(waitUntil(timeout: 5) { server.acceptedCount == 4 })
        another.close()
        #expect(server.maxConcurrentConnections == 3)
    }

    @Test func stopWakesBlockedScriptsPromptly() throws {
        let finished = Mutex(0)
        let server = try ScriptedServer { connection in
            defer { finished.withLock { $0 += 1 } }
            if connection.index == 0 {
                connection.pause(30)
            } else {
                _ = try connection.readRequest(timeout: 30)
            }
        }
        let clients = try (0..<2).map { _ in try RawTCPClient(port: server.port) }
        #expect(waitUntil(timeout: 5) { server.acceptedCount == 2 })

        let started = monotonicSeconds()
        server.stop()
        #expect(monotonicSeconds() - started < 2)
        #expect(finished.withLock { $0 } == 2)
        #expect(clients.allSatisfy { $0.waitForPeerClose(timeout: 2) })
        server.stop() // Idempotent.
        #expect(throws: LoopbackSocketError.self) { try RawTCPClient(port: server.port, timeout: 1) }
    }

    @Test func releasesEveryDescriptorWhenStopped() throws {
        // Start the shared servers first: their lifelines hold descriptors for the rest of the
        // process, which would otherwise show up as a leak if another test started them now.
        _ = try? TestServers.nginx()
        _ = try? TestServers.httpbin()
        let baseline = openFileDescriptorCount()
        let server = try ScriptedServer { connection in
            try connection.serveKeepAlive { _ in ScriptedResponse.text("x") }
        }
        let port = server.port
        do {
            let client = try RawTCPClient(port: port)
            try client.write("GET / HTTP/1.1\r\nHost: a\r\n\r\n")
            _ = try client.readResponse()
            #expect(openSocketCount(port: port) == 3) // listener, accepted end, client end
            client.close()
        }
        server.stop()
        #expect(openSocketCount(port: port) == 0)
        // Other tests run in parallel and open descriptors too, so allow them to settle.
        #expect(waitUntil(timeout: 5) { openFileDescriptorCount() <= baseline },
                "fds: baseline \(baseline), now \(openFileDescriptorCount())")
    }
}

@Suite("Test support: shared servers", .tags(.nginx))
struct TestServersSelfTests {
    @Test func nginxServesHelloAndKeepsTheConnectionAlive() throws {
        let nginx = try TestServers.nginx()
        let client = try RawTCPClient(port: nginx.port)
        for path in ["/", "/hello"] {
            try client.write("GET \(path) HTTP/1.1\r\nHost: localhost\r\n\r\n")
            let response = try client.readResponse()
            #expect(response.status == 200)
            #expect(response.body == Array("hello world\n".utf8))
            #expect(response.header("content-length") == "12")
            #expect(response.header("connection")?.lowercased() == "keep-alive")
        }
        #expect(!client.waitForPeerClose(timeout: 0.3), "still open after two requests")
        #expect(nginx.baseURL == "http://127.0.0.1:\(nginx.port)")
    }

    @Test func nginxClosesAfterSlashClose() throws {
        let nginx = try TestServers.nginx()
        let client = try RawTCPClient(port: nginx.port)
        try client.write("GET /close HTTP/1.1\r\nHost: localhost\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.bodyText == NginxServer.helloBody)
        #expect(response.header("connection")?.lowercased() == "close")
        #expect(client.waitForPeerClose())
    }

    @Test func nginxClosesIdleConnectionsAfterOneSecondOnIdleClose() throws {
        let nginx = try TestServers.nginx()
        let client = try RawTCPClient(port: nginx.port)
        try client.write("GET /idle-close HTTP/1.1\r\nHost: localhost\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.bodyText == NginxServer.helloBody)
        #expect(response.header("connection")?.lowercased() == "keep-alive")
        let answered = monotonicSeconds()
        #expect(!client.waitForPeerClose(timeout: 0.5), "kept alive at first")
        #expect(client.waitForPeerClose(timeout: 3))
        #expect(monotonicSeconds() - answered >= 0.9)
    }

    @Test func nginxSpecialLocations() throws {
        let nginx = try TestServers.nginx()
        let client = try RawTCPClient(port: nginx.port)
        func get(_ path: String) throws -> RawResponse {
            try client.write("GET \(path) HTTP/1.1\r\nHost: localhost\r\n\r\n")
            return try client.readResponse(timeout: 10)
        }
        #expect(try get("/no-content").status == 204)
        #expect(try get("/not-modified").status == 304)
        let large = try get("/large")
        #expect(large.header("content-length") == String(NginxServer.largeSize))
        #expect(large.body == NginxServer.largeBody(count: NginxServer.largeSize))
        #expect(try get("/large-8m").body == NginxServer.largeBody(count: NginxServer.large8MSize))
        let chunked = try get("/chunked")
        #expect(chunked.header("transfer-encoding") == "chunked")
        #expect(chunked.bodyText == NginxServer.helloBody)
        let largeChunked = try get("/large-chunked")
        #expect(largeChunked.header("transfer-encoding") == "chunked")
        #expect(largeChunked.body == NginxServer.largeBody(count: NginxServer.largeSize))
        let redirect = try get("/redirect")
        #expect(redirect.status == 302)
        #expect(redirect.header("location")?.hasSuffix("/hello") == true)
        #expect(try get("/missing").status == 404)
        try client.write("POST /hello HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2000000\r\n\r\n")
        try client.write([UInt8](repeating: 65, count: 2_000_000))
        #expect(try client.readResponse().bodyText == NginxServer.helloBody, "large uploads are accepted")
    }

    @Test func httpbinAnswersJSON() throws {
        let httpbin = try TestServers.httpbin()
        let client = try RawTCPClient(port: httpbin.port)
        try client.write("GET /get?a=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 200)
        #expect(response.header("content-type") == "application/json")
        let json = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
        #expect((json?["args"] as? [String: Any])?["a"] as? String == "1")
    }

    @Test func releasedSupervisedProcessIsGoneWithItsDirectory() throws {
        let directory = NSTemporaryDirectory() + "uvnetworking-supervised-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let process = try SupervisedProcess.launch(["/bin/sleep", "600"], directory: directory)
        #expect(process.exitStatus == nil)
        let started = monotonicSeconds()
        process.release()
        #expect(process.exitStatus != nil)
        #expect(monotonicSeconds() - started < 2)
        #expect(!FileManager.default.fileExists(atPath: directory))
    }
}
