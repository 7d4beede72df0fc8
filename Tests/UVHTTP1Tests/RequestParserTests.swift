import HTTPTypes
import Testing

@testable import UVHTTP1

/// The request parser's events, fed bytes directly: every shape of request, pipelining, the end
/// of the stream.
@Suite(.tags(.unit)) struct RequestParserTests {
    @Test func getWithoutBody() {
        let input = "GET /items/7?x=1 HTTP/1.1\r\nHost: example.test\r\nAccept: */*\r\n\r\n"
        let result = parseRequests(input)
        #expect(result.error == nil)
        #expect(result.consumed == input.utf8.count)
        #expect(result.events == [
            .head(requestHead("GET", "/items/7?x=1", [("Host", "example.test"), ("Accept", "*/*")])),
            .end(trailers: []),
        ])
        #expect(result.parser.isBetweenRequests)
        #expect(!result.parser.isStopped)
    }

    @Test func targetAsBytesAndStringAndFieldsAsHTTPFields() throws {
        let result = parseRequests("OPTIONS * HTTP/1.1\r\nHost: h\r\nX-Custom:  spaced value \r\n\r\n")
        guard case .head(let head)? = result.events.first else { Issue.record("no head"); return }
        #expect(head.method == "OPTIONS")
        #expect(head.target == "*")
        #expect(head.targetBytes == [UInt8(ascii: "*")])
        var expected = HTTPFields()
        expected.append(HTTPField(name: .init("Host")!, value: "h"))
        expected.append(HTTPField(name: .init("X-Custom")!, value: "spaced value"))
        #expect(head.httpFields == expected)
        #expect(head.httpFields[HTTPField.Name("x-custom")!] == "spaced value")
    }

    @Test func contentLengthBody() {
        let input = "POST /upload HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello"
        let result = parseRequests(input)
        #expect(result.error == nil)
        #expect(result.events == [
            .head(requestHead("POST", "/upload", [("Content-Length", "5")], framing: .contentLength(5))),
            .body(Array("hello".utf8)),
            .end(trailers: []),
        ])
    }

    @Test func chunkedBodyWithTrailers() {
        let input = "PUT /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Sum: abc\r\n\r\n"
        let result = parseRequests(input)
        #expect(result.error == nil)
        #expect(result.consumed == input.utf8.count)
        #expect(result.events == [
            .head(requestHead("PUT", "/x", [("Transfer-Encoding", "chunked")], framing: .chunked)),
            .body(Array("hello world".utf8)),
            .end(trailers: [HeaderField(name: "X-Sum", value: "abc")]),
        ])
    }

    @Test func pipelinedRequestsInOneFeed() {
        let input = "GET /a HTTP/1.1\r\n\r\nPOST /b HTTP/1.1\r\nContent-Length: 2\r\n\r\nhiGET /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\nHEAD /d HTTP/1.1\r\n\r\n"
        let result = parseRequests(input)
        #expect(result.error == nil)
        #expect(result.consumed == input.utf8.count)
        #expect(result.events == [
            .head(requestHead("GET", "/a")), .end(trailers: []),
            .head(requestHead("POST", "/b", [("Content-Length", "2")], framing: .contentLength(2))), .body(Array("hi".utf8)), .end(trailers: []),
            .head(requestHead("GET", "/c", [("Transfer-Encoding", "chunked")], framing: .chunked)), .body([UInt8(ascii: "x")]), .end(trailers: []),
            .head(requestHead("HEAD", "/d")), .end(trailers: []),
        ])
    }

    @Test func emptyLinesBeforeARequestAreSkipped() {
        let result = parseRequests("\r\n\r\nGET / HTTP/1.1\r\n\r\n\r\nGET /2 HTTP/1.1\r\n\r\n")
        #expect(result.error == nil)
        #expect(result.events == [.head(requestHead("GET", "/")), .end(trailers: []), .head(requestHead("GET", "/2")), .end(trailers: [])])
    }

    @Test func http10IsNotKeptAliveUnlessAsked() {
        let closing = parseRequests("GET / HTTP/1.0\r\n\r\nGET /next HTTP/1.0\r\n\r\n")
        #expect(closing.error == nil)
        #expect(closing.events == [.head(requestHead("GET", "/", minor: 0, keepAlive: false)), .end(trailers: [])])
        // Parsing stops after a request that ends the connection: the next one is left unconsumed.
        #expect(closing.parser.isStopped)
        #expect(closing.consumed == "GET / HTTP/1.0\r\n\r\n".utf8.count)

        let kept = parseRequests("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /next HTTP/1.0\r\n\r\n")
        #expect(kept.events.count == 4)
        #expect(kept.events.first == .head(requestHead("GET", "/", minor: 0, [("Connection", "keep-alive")])))
    }

    @Test func connectionCloseStopsAfterTheRequestEnd() {
        let first = "POST / HTTP/1.1\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx"
        let result = parseRequests(first + "GET / HTTP/1.1\r\n\r\n")
        #expect(result.error == nil)
        #expect(result.consumed == first.utf8.count)
        #expect(result.events.last == .end(trailers: []))
        #expect(result.events.count == 3)
        #expect(result.parser.isStopped)
        // A stopped parser consumes nothing more, and the end of the stream is fine.
        #expect((try? result.parser.feed(Array("GET".utf8))) == [])
        #expect(result.parser.consumedByteCount == first.utf8.count)
    }

    @Test func upgradeAndConnectAreReportedAndStopTheParser() {
        let upgrade = "GET /chat HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n"
        let result = parseRequests(upgrade + "\u{81}\u{05}frame")
        #expect(result.error == nil)
        #expect(result.events == [
            .head(requestHead("GET", "/chat", [("Connection", "Upgrade"), ("Upgrade", "websocket")], isUpgrade: true)),
            .end(trailers: []),
        ])
        #expect(result.consumed == upgrade.utf8.count)
        #expect(result.parser.isStopped)

        let connect = "CONNECT example.test:443 HTTP/1.1\r\nHost: example.test:443\r\n\r\n"
        let tunnel = parseRequests(connect + "\u{16}\u{03}\u{01}")
        #expect(tunnel.error == nil)
        #expect(tunnel.events == [.head(requestHead("CONNECT", "example.test:443", [("Host", "example.test:443")], isUpgrade: true)), .end(trailers: [])])
        #expect(tunnel.consumed == connect.utf8.count)

        // Upgrade without "Connection: upgrade" is no upgrade (RFC 9110 §7.8).
        let plain = parseRequests("GET / HTTP/1.1\r\nUpgrade: websocket\r\n\r\n")
        #expect(plain.events.first == .head(requestHead("GET", "/", [("Upgrade", "websocket")])))
        #expect(!plain.parser.isStopped)
    }

    @Test func expectContinueIsReportedForHTTP11Only() {
        let result = parseRequests("PUT /f HTTP/1.1\r\nExpect: 100-Continue\r\nContent-Length: 3\r\n\r\nabc")
        #expect(result.events.first == .head(requestHead("PUT", "/f", [("Expect", "100-Continue"), ("Content-Length", "3")],
                                                         expectsContinue: true, framing: .contentLength(3))))
        let old = parseRequests("PUT /f HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\nabc")
        guard case .head(let head)? = old.events.first else { Issue.record("no head"); return }
        #expect(!head.expectsContinue)
        let other = parseRequests("PUT /f HTTP/1.1\r\nExpect: something-else\r\nContent-Length: 3\r\n\r\nabc")
        guard case .head(let otherHead)? = other.events.first else { Issue.record("no head"); return }
        #expect(!otherHead.expectsContinue)
    }

    @Test func consumerSeesViewsWithoutCopies() throws {
        final class Routes: RequestParserConsumer {
            var seen: [String] = []
            func parserReceivedHead(_ head: RequestHeadView) {
                seen.append("\(String(decoding: head.method, as: UTF8.self)) \(String(decoding: head.target, as: UTF8.self)) head=\(head.isHEAD) fields=\(head.fields.count)")
            }
            func parserReceivedBody(_ bytes: UnsafeRawBufferPointer) { seen.append("body \(bytes.count)") }
            func parserReceivedEnd(trailers: ReceivedFields) { seen.append("end \(trailers.count)") }
        }
        let routes = Routes()
        let parser = RequestParser()
        let input = Array("HEAD /h HTTP/1.1\r\nA: 1\r\n\r\nPOST /p HTTP/1.1\r\nContent-Length: 4\r\n\r\nbody".utf8)
        let consumed = try input.withUnsafeBytes { raw throws(RequestParseError) in try parser.feed(raw, to: routes) }
        #expect(consumed == input.count)
        #expect(routes.seen == ["HEAD /h head=true fields=1", "end 0", "POST /p head=false fields=1", "body 4", "end 0"])
    }

    @Test func endOfStreamBetweenRequestsIsFineInsideOneIsNot() {
        #expect(parseRequests("").error == nil)
        #expect(parseRequests("GET / HTTP/1.1\r\n\r\n\r\n").error == nil)
        let cases: [(String, String)] = [
            ("GE", "head"),
            ("GET / HTTP/1.1\r\nHost: x\r\n", "head"),
            ("POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nabc", "body"),
            ("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", "body"),
            ("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: y\r\n", "trailer"),
        ]
        for (input, part) in cases {
            let result = parseRequests(input)
            #expect(result.error?.kind == .truncatedBody, "\(input)")
            #expect(result.error?.offset == input.utf8.count, "\(input)")
            #expect(result.error?.reason.contains(part) == true, "\(input)")
        }
    }

    @Test func errorsAreTerminal() throws {
        let parser = RequestParser()
        let bad = Array("GET / HTTP/1.1\r\nBad Name: x\r\n\r\n".utf8)
        var first: RequestParseError?
        do { _ = try parser.feed(bad) } catch { first = error }
        let error = try #require(first)
        #expect(error.kind == .malformed)
        // Every later call throws the same error and consumes nothing.
        #expect(throws: error) { try parser.feed(Array("GET / HTTP/1.1\r\n\r\n".utf8)) }
        #expect(throws: error) { try parser.finish() }
        #expect(parser.consumedByteCount == 0)
    }
}
