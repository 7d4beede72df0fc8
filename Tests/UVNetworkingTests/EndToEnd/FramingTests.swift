import Foundation
import Testing
@_spi(Testing) @testable import UVNetworking

extension EndToEnd {
    /// How responses end, and what happens when they end wrongly.
    @Suite(.tags(.nginx)) struct Framing {
        /// Serves `response` to the first request on each connection, then waits for the client
        /// to close.
        private func serve(_ response: String, thenClose: Bool = false) throws -> ScriptedServer {
            try ScriptedServer { connection in
                _ = try connection.readRequest()
                try connection.write(response)
                if thenClose { connection.close() } else { _ = connection.waitForPeerClose(timeout: 10) }
            }
        }

        @Test func chunkedBodyWithTrailers() throws {
            let harness = ClientHarness()
            let server = try serve("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-Sum\r\n\r\n"
                                   + "5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\nX-Sum: 42\r\n\r\n")
            let outcome = harness.fetch("http://127.0.0.1:\(server.port)/")
            #expect(outcome.error == nil)
            #expect(outcome.text == "hello, world")
            server.stop()
            harness.finish()
        }

        @Test func nginxChunkedBodies() throws {
            let nginx = try TestServers.nginx()
            let harness = ClientHarness()
            #expect(harness.fetch(nginx.baseURL + "/chunked").text == "hello world\n")
            let large = harness.fetch(nginx.baseURL + "/large-chunked")
            #expect(large.data == Data(NginxServer.largeBody(count: NginxServer.largeSize)))
            harness.finish()
        }

        @Test func eofFramedBody() throws {
            let harness = ClientHarness()
            let server = try serve("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nall of it", thenClose: true)
            let outcome = harness.fetch("http://127.0.0.1:\(server.port)/")
            #expect(outcome.error == nil)
            #expect(outcome.text == "all of it")
            server.stop()
            harness.finish()
        }

        @Test func headWithContentLengthHasNoBodyAndKeepsTheConnection() throws {
            let nginx = try TestServers.nginx()
            let harness = ClientHarness()
            let head = harness.fetch(nginx.baseURL + "/large", method: .head)
            #expect(head.status == 200)
            #expect(head.response?.headerFields[.contentLength] == String(NginxServer.largeSize))
            #expect(head.data?.isEmpty == true)
            #expect(harness.fetch(nginx.baseURL + "/hello").text == "hello world\n")
            #expect(harness.manager.openConnectionCount == 1)
            harness.finish()
        }

        @Test(arguments: [204, 304])
        func noBodyStatusesIgnoreContentLengthAndKeepTheConnection(status: Int) throws {
            let harness = ClientHarness()
            let server = try ScriptedServer { connection in
                try connection.serveKeepAlive { request in
                    request.target == "/empty"
                        ? "HTTP/1.1 \(status) Nothing\r\nContent-Length: 5\r\n\r\n"
                        : ScriptedResponse.text("next")
                }
            }
            let base = "http://127.0.0.1:\(server.port)"
            let empty = harness.fetch(base + "/empty")
            #expect(empty.status == status)
            #expect(empty.data?.isEmpty == true)
            #expect(harness.fetch(base + "/after").text == "next")
            #expect(server.acceptedCount == 1)
            server.stop()
            harness.finish()
        }

        @Test func nginx204And304() throws {
            let nginx = try TestServers.nginx()
            let harness = ClientHarness()
            #expect(harness.fetch(nginx.baseURL + "/no-content").status == 204)
            #expect(harness.fetch(nginx.baseURL + "/not-modified").status == 304)
            harness.finish()
        }

        @Test func informationalResponsesBeforeTheFinalOne() throws {
            let harness = ClientHarness()
            let server = try serve("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n"
                                   + ScriptedResponse.text("final", headers: [("X-Final", "yes")]))
            let outcome = harness.fetch("http://127.0.0.1:\(server.port)/")
            #expect(outcome.status == 200)
            #expect(outcome.response?.headerFields[.init("X-Final")!] == "yes")
            #expect(outcome.response?.headerFields[.init("Link")!] == nil)
            #expect(outcome.text == "final")
            server.stop()
            harness.finish()
        }

        @Test func truncatedContentLengthBody() throws {
            let harness = ClientHarness()
            let server = try serve("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly this", thenClose: true)
            let outcome = harness.fetch("http://127.0.0.1:\(server.port)/")
            #expect(outcome.code == .truncatedResponse)
            #expect(outcome.status == 200, "the head that arrived is reported with the error")
            server.stop()
            harness.finish()
        }

        @Test func truncatedChunkedBody() throws {
            let harness = ClientHarness()
            let server = try serve("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n10\r\nshort", thenClose: true)
            #expect(harness.fetch("http://127.0.0.1:\(server.port)/").code == .truncatedResponse)
            server.stop()
            harness.finish()
        }

        @Test func resetMidBody() throws {
            let harness = ClientHarness()
            let server = try ScriptedServer { connection in
                _ = try connection.readRequest()
                try connection.write("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + String(repeating: "x", count: 1000))
                connection.pause(0.05)
                connection.reset()
            }
            #expect(harness.fetch("http://127.0.0.1:\(server.port)/").code == .connectionReset)
            server.stop()
            harness.finish()
        }

        @Test func earlyResponseBeforeTheBodyIsSentThenCloseStillSucceeds() throws {
            let harness = ClientHarness()
            let server = try ScriptedServer { connection in
                _ = try connection.readRequestHead()
                try connection.write(ScriptedResponse.text("too large", status: 413, reason: "Content Too Large",
                                                           headers: [("Connection", "close")]))
                // A reset discards whatever the client has not read yet, response included: give
                // it a second, not 0.1 s, which a loaded CI machine once missed.
                connection.pause(1)
                connection.reset()
            }
            // Large enough that the kernel cannot take it all before the server answers.
            let body = String(repeating: "x", count: 32 << 20)
            let outcome = harness.fetch("http://127.0.0.1:\(server.port)/", method: .post, body: body)
            #expect(outcome.error == nil, "\(String(describing: outcome.error))")
            #expect(outcome.status == 413)
            #expect(outcome.text == "too large")
            server.stop()
            harness.finish()
        }

        @Test func closedBeforeAnyResponseByte() throws {
            let harness = ClientHarness()
            let server = try ScriptedServer { connection in
                _ = try connection.readRequest()
                connection.close()
            }
            #expect(harness.fetch("http://127.0.0.1:\(server.port)/").code == .connectionClosed)
            server.stop()
            harness.finish()
        }

        @Test(arguments: [
            "HTTP/1.1 200 OK\rContent-Length: 2\r\n\r\nhi",                              // bare CR
            "HTTP/1.1 200 OK\r\n: empty\r\nContent-Length: 2\r\n\r\nhi",                 // empty field name
            "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nhi",       // differing lengths
            "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n",
            "HTTP/1.1 2000 OK\r\n\r\n",
            "SMTP ready\r\n\r\n",
        ])
        func malformedResponsesAreRejected(response: String) throws {
            let harness = ClientHarness()
            let server = try serve(response, thenClose: true)
            #expect(harness.fetch("http://127.0.0.1:\(server.port)/").code == .malformedResponse)
            server.stop()
            harness.finish()
        }

        /// Lines ending in a bare LF (RFC 9112 §2.2), in the head, the chunk framing and the
        /// trailers; body bytes that are LFs stay as they are, and the connection is reused.
        @Test func bareLFLineEndsAreAccepted() throws {
            let harness = ClientHarness()
            let server = try ScriptedServer { connection in
                try connection.serveKeepAlive { request in
                    request.target == "/chunked"
                        ? "HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n3\na\nb\n2;x=y\r\n\r\n\n0\nT: v\n\n"
                        : "HTTP/1.1 200 OK\nX-A: 1\nContent-Length: 4\n\nc\nd\n"
                }
            }
            let chunked = harness.fetch("http://127.0.0.1:\(server.port)/chunked")
            #expect(chunked.error == nil)
            #expect(chunked.text == "a\nb\r\n")
            let sized = harness.fetch("http://127.0.0.1:\(server.port)/sized")
            #expect(sized.error == nil)
            #expect(sized.text == "c\nd\n")
            #expect(sized.response?.headerFields[.init("X-A")!] == "1")
            #expect(server.acceptedCount == 1)
            server.stop()
            harness.finish()
        }

        /// RFC 9110 §8.6: the same Content-Length twice, or as a list, frames the body once.
        @Test func repeatedContentLengthIsOneValue() throws {
            let harness = ClientHarness()
            let server = try serve("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2, 2\r\n\r\nhi")
            let outcome = harness.fetch("http://127.0.0.1:\(server.port)/")
            #expect(outcome.error == nil)
            #expect(outcome.text == "hi")
            server.stop()
            harness.finish()
        }

        @Test func obsFoldIsReplacedBySpace() throws {
            let harness = ClientHarness()
            let server = try serve("HTTP/1.1 200 OK\r\nX-Folded: one\r\n  two\r\nContent-Length: 2\r\n\r\nhi")
            let outcome = harness.fetch("http://127.0.0.1:\(server.port)/")
            #expect(outcome.response?.headerFields[.init("X-Folded")!] == "one two")
            server.stop()
            harness.finish()
        }

        @Test func oversizedHeadIsRejected() throws {
            let harness = ClientHarness { $0.maximumResponseHeaderBytes = 1024 }
            let server = try serve("HTTP/1.1 200 OK\r\nX-Big: \(String(repeating: "a", count: 2000))\r\nContent-Length: 0\r\n\r\n")
            #expect(harness.fetch("http://127.0.0.1:\(server.port)/").code == .responseHeadTooLarge)
            server.stop()
            harness.finish()
        }

        @Test func oversizedBodyIsRejected() throws {
            let nginx = try TestServers.nginx()
            let harness = ClientHarness { $0.maximumResponseBodyBytes = 1000 }
            #expect(harness.fetch(nginx.baseURL + "/large").code == .responseBodyTooLarge)
            #expect(harness.fetch(nginx.baseURL + "/large-chunked").code == .responseBodyTooLarge)
            #expect(harness.fetch(nginx.baseURL + "/hello").text == "hello world\n")
            harness.finish()
        }

        @Test func unsolicitedUpgradeIsRefused() throws {
            let harness = ClientHarness()
            let server = try serve("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
            #expect(harness.fetch("http://127.0.0.1:\(server.port)/").code == .unexpectedUpgrade)
            server.stop()
            harness.finish()
        }

        @Test func largeBodiesArriveIntact() throws {
            let nginx = try TestServers.nginx()
            let harness = ClientHarness()
            #expect(harness.fetch(nginx.baseURL + "/large-8m").data == Data(NginxServer.largeBody(count: NginxServer.large8MSize)))
            harness.finish()
        }
    }
}
