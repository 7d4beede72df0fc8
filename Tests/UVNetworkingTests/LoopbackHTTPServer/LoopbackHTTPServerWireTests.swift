#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import LoopbackHTTPServer

/// The server over real sockets, byte for byte: pipelining, split requests, bodies, closing
/// rules, refusals, and `stop()` with connections open.
@Suite(.tags(.loopback), .serialized) struct LoopbackHTTPServerWireTests {
    /// A started server; the test stops it.
    private func startServer() throws -> (LoopbackHTTPServer, Int) {
        let server = LoopbackHTTPServer()
        return (server, try server.start())
    }

    private func expectItem(_ response: RawResponse, _ item: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.status == 200, sourceLocation: sourceLocation)
        #expect(response.body == LoopbackHTTPServer.itemBody(item), sourceLocation: sourceLocation)
        #expect(response.header("Content-Type") == "text/plain", sourceLocation: sourceLocation)
    }

    @Test func twoRequestsInOneWriteGetTwoResponsesInOrder() throws {
        let (server, port) = try startServer()
        defer { server.stop() }
        let client = try RawTCPClient(port: port)
        try client.write("GET /items/1 HTTP/1.1\r\nHost: a\r\n\r\nGET /items/2 HTTP/1.1\r\nHost: a\r\n\r\n")
        expectItem(try client.readResponse(), 1)
        expectItem(try client.readResponse(), 2)
        // Still open for more.
        try client.write("GET /items/3 HTTP/1.1\r\n\r\n")
        expectItem(try client.readResponse(), 3)
    }

    @Test func aRequestSentByteByByteIsAnswered() throws {
        let (server, port) = try startServer()
        defer { server.stop() }
        let client = try RawTCPClient(port: port)
        let request = "POST /items/7 HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
        for byte in request.utf8 { try client.write([byte]) }
        expectItem(try client.readResponse(), 7)
    }

    @Test func bodiesAreReadAndDroppedWhateverTheirFraming() throws {
        let (server, port) = try startServer()
        defer { server.stop() }
        let client = try RawTCPClient(port: port)
        let big = String(repeating: "x", count: 200_000)
        try client.write("POST /items/8 HTTP/1.1\r\nContent-Length: \(big.utf8.count)\r\n\r\n\(big)"
            + "PUT /items/9 HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n\(String(big.utf8.count, radix: 16))\r\n\(big)\r\n0\r\n\r\n"
            + "GET /items/10 HTTP/1.1\r\n\r\n")
        expectItem(try client.readResponse(), 8)
        expectItem(try client.readResponse(), 9)
        expectItem(try client.readResponse(), 10)
    }

    @Test func http10AndConnectionCloseAreAnsweredThenClosed() throws {
        let (server, port) = try startServer()
        defer { server.stop() }
        for request in ["GET /items/4 HTTP/1.0\r\n\r\n", "GET /items/4 HTTP/1.1\r\nConnection: close\r\n\r\nGET /items/5 HTTP/1.1\r\n\r\n"] {
            let client = try RawTCPClient(port: port)
            try client.write(request)
            let response = try client.readResponse()
            expectItem(response, 4)
            #expect(response.header("Connection") == "close")
            #expect(try client.readToEOF() == [], "nothing after the response, and then EOF")
        }
        // An HTTP/1.0 client that asks for keep-alive gets it, and is told so.
        let client = try RawTCPClient(port: port)
        try client.write("GET /items/6 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        let response = try client.readResponse()
        expectItem(response, 6)
        #expect(response.header("Connection") == "keep-alive")
        try client.write("GET /items/7 HTTP/1.0\r\n\r\n")
        expectItem(try client.readResponse(), 7)
        #expect(client.waitForPeerClose())
    }

    @Test func malformedRequestsGet400AndTheConnectionCloses() throws {
        let (server, port) = try startServer()
        defer { server.stop() }
        for garbage in ["\u{1}\u{2}\u{3} nonsense\r\n\r\n", "GET /items/1 HTTP/9.9\r\n\r\n", "GET /items/1 HTTP/1.1\r\nBad Header\r\n\r\n"] {
            let client = try RawTCPClient(port: port)
            try client.write(garbage)
            let response = try client.readResponse()
            #expect(response.status == 400, "for \(garbage.debugDescription)")
            #expect(response.header("Connection") == "close")
            #expect(response.bodyText == "bad request\n")
            #expect(client.waitForPeerClose())
        }
    }

    @Test func anOversizedHeadGets431AndTheConnectionCloses() throws {
        let (server, port) = try startServer()
        defer { server.stop() }
        let client = try RawTCPClient(port: port)
        let value = String(repeating: "v", count: 1024)
        let fields = (0..<40).map { "X-Field-\($0): \(value)\r\n" }.joined()
        try client.write("GET /items/1 HTTP/1.1\r\n\(fields)\r\n")
        let response = try client.readResponse()
        #expect(response.status == 431)
        #expect(response.header("Connection") == "close")
        #expect(client.waitForPeerClose())
    }

    @Test func headGetsTheHeadWithoutTheBody() throws {
        let (server, port) = try startServer()
        defer { server.stop() }
        let client = try RawTCPClient(port: port)
        // The GET right after shows that no body bytes followed the HEAD's head.
        try client.write("HEAD /items/11 HTTP/1.1\r\n\r\nGET /items/12 HTTP/1.1\r\n\r\n")
        let head = try client.readResponse(toHEAD: true)
        #expect(head.status == 200)
        #expect(head.header("Content-Length") == String(LoopbackHTTPServer.itemBodyLength(11)))
        expectItem(try client.readResponse(), 12)
    }

    @Test func expectContinueGetsAnInterimResponseBeforeTheBodyIsSent() throws {
        let (server, port) = try startServer()
        defer { server.stop() }
        let client = try RawTCPClient(port: port)
        try client.write("POST /items/13 HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
        let interim = try client.readResponse()
        #expect(interim.status == 100)
        try client.write("hello")
        expectItem(try client.readResponse(), 13)
    }

    @Test func stopClosesOpenConnectionsAndLeaksNoDescriptor() throws {
        let baseline = openFileDescriptorCount()
        let (server, port) = try startServer()
        weak let loop = server.currentLoop
        #expect(loop != nil)
        var clients: [RawTCPClient] = []
        for item in 0..<3 {
            let client = try RawTCPClient(port: port)
            try client.write("GET /items/\(item) HTTP/1.1\r\n\r\n")
            expectItem(try client.readResponse(), item)
            clients.append(client)
        }
        // One more in the middle of a head, one whose last response closes (lingering).
        let halfway = try RawTCPClient(port: port)
        try halfway.write("GET /items/1 HTTP/1.1\r\nHost:")
        let closing = try RawTCPClient(port: port)
        try closing.write("GET /items/1 HTTP/1.1\r\nConnection: close\r\n\r\n")
        _ = try closing.readResponse()
        clients += [halfway, closing]
        // The listener and both ends of every connection.
        #expect(waitUntil(timeout: 5) { openSocketCount(port: port) == 1 + 2 * clients.count })

        server.stop()
        #expect(server.port == nil)
        // Each connection (and each pending write, through its connection) holds the loop.
        #expect(loop == nil, "a connection or the loop outlived stop()")
        for client in clients { #expect(client.waitForPeerClose()) }
        #expect(openSocketCount(port: port) == clients.count, "only the clients' ends are left")
        for client in clients { client.close() }
        #expect(openSocketCount(port: port) == 0)
        #expect(waitUntil(timeout: 5) { openFileDescriptorCount() == baseline },
                "descriptors: \(openFileDescriptorCount()) after, \(baseline) before")
        #expect(throws: (any Error).self) { try RawTCPClient(port: port, timeout: 1) }
    }

    @Test func aBusyPortIsAnErrorAndAStoppedServerStartsAgain() throws {
        let (server, port) = try startServer()
        #expect(try server.start() == port, "start on a running server returns its port")
        let second = LoopbackHTTPServer(port: port)
        #expect {
            try second.start()
        } throws: { error in
            guard let error = error as? LoopbackHTTPServerError else { return false }
            // libuv binds with SO_REUSEADDR, so on Linux it is listen(2) that finds the port taken.
            return error.code == -EADDRINUSE && error.description.contains("127.0.0.1:\(port): address already in use")
        }
        server.stop()
        server.stop()  // idempotent
        let again = try server.start()
        let client = try RawTCPClient(port: again)
        try client.write("GET /status/418 HTTP/1.1\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 418)
        #expect(response.bodyText == "status 418\n")
        server.stop()
    }
}
