import Testing
@testable import LoopbackHTTPServer

/// The server's request handling (UVHTTP1's parser and the server's answers) fed directly: the
/// answers must not depend on how the bytes were split into reads, and every kind of request it
/// must frame is in the script.
@Suite(.tags(.loopback)) struct RequestResponderTests {
    /// Every kind of request the server frames, pipelined: a plain GET, a Content-Length body, a
    /// chunked body with an extension and a trailer, HEAD, Expect: 100-continue, a status route,
    /// an absolute-form target with a query, and an unknown path.
    static let script = [
        "GET /items/1 HTTP/1.1\r\nHost: x\r\n\r\n",
        "POST /items/2 HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\nhello world",
        "PUT /items/3 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nTrailer: t\r\n\r\n",
        "HEAD /items/4 HTTP/1.1\r\nHost: x\r\n\r\n",
        "POST /items/5 HTTP/1.1\r\nHost: x\r\nEXPECT: 100-Continue \r\nContent-Length: 3\r\n\r\nabc",
        "DELETE /status/503 HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET http://127.0.0.1:1/items/6?x=1 HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET /elsewhere HTTP/1.1\r\nHost: x\r\n\r\n",
    ].joined()

    /// What `feed` wrote, and the outcome of the last feed.
    private func parse(_ pieces: [[UInt8]]) -> (text: String, outcome: RequestResponder.Outcome) {
        let output = OutputBuffer(capacity: 64)
        let responder = RequestResponder(output: output)
        var outcome = RequestResponder.Outcome.keepReading
        for piece in pieces {
            outcome = piece.withUnsafeBytes { responder.feed($0) }
            if outcome == .close { break }
        }
        return (String(decoding: output.bytes, as: UTF8.self), outcome)
    }

    private func item(_ item: Int, head: Bool = false) -> String {
        let body = String(decoding: LoopbackHTTPServer.itemBody(item), as: UTF8.self)
        return "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + (head ? "" : body)
    }

    @Test func answersEveryRequestOfThePipelineInOrder() {
        let (text, outcome) = parse([Array(Self.script.utf8)])
        let expected = item(1) + item(2) + item(3) + item(4, head: true)
            + "HTTP/1.1 100 Continue\r\n\r\n" + item(5)
            + "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: 11\r\n\r\nstatus 503\n"
            + item(6)
            + "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 10\r\n\r\nnot found\n"
        #expect(text == expected)
        #expect(outcome == .keepReading)
    }

    @Test func byteByByteGivesTheSameAnswers() {
        let whole = parse([Array(Self.script.utf8)]).text
        let bytes = Array(Self.script.utf8).map { [$0] }
        #expect(parse(bytes).text == whole)
    }

    @Test func everyTwoPieceSplitGivesTheSameAnswers() {
        let bytes = Array(Self.script.utf8)
        let whole = parse([bytes]).text
        var mismatches: [Int] = []
        for cut in 1..<bytes.count where parse([Array(bytes[..<cut]), Array(bytes[cut...])]).text != whole {
            mismatches.append(cut)
        }
        #expect(mismatches.isEmpty, "answers differ when split at \(mismatches.prefix(10))")
    }

    @Test func connectionCloseAndHTTP10EndTheConnectionAndIgnoreWhatFollows() {
        let close = parse([Array("GET /items/1 HTTP/1.1\r\nConnection: close\r\n\r\nGET /items/2 HTTP/1.1\r\n\r\n".utf8)])
        #expect(close.outcome == .close)
        let length = LoopbackHTTPServer.itemBodyLength(1)
        #expect(close.text.hasPrefix("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: \(length)\r\nConnection: close\r\n\r\nitem 1\n"))
        #expect(!close.text.contains("item 2"))
        let http10 = parse([Array("GET /items/1 HTTP/1.0\r\n\r\n".utf8)])
        #expect(http10.outcome == .close)
        #expect(http10.text.contains("\r\nConnection: close\r\n"))
        let kept = parse([Array("GET /items/1 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n".utf8)])
        #expect(kept.outcome == .keepReading)
        #expect(kept.text.contains("\r\nConnection: keep-alive\r\n"))
    }

    @Test func upgradesAndConnectAreAnsweredThenClosed() {
        let upgrade = parse([Array("GET /items/1 HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n\u{81}\u{0}".utf8)])
        #expect(upgrade.outcome == .close)
        #expect(upgrade.text.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(upgrade.text.contains("\r\nConnection: close\r\n"))
        let connect = parse([Array("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n\u{16}\u{3}".utf8)])
        #expect(connect.outcome == .close)
        #expect(connect.text.hasPrefix("HTTP/1.1 404 Not Found\r\n"))
        #expect(connect.text.contains("\r\nConnection: close\r\n"))
    }

    @Test func malformedInputIsRefusedWith400AfterTheRequestsBeforeIt() {
        let result = parse([Array("GET /items/1 HTTP/1.1\r\n\r\nNOT HTTP\r\n\r\n".utf8)])
        #expect(result.outcome == .close)
        #expect(result.text == item(1)
            + "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nContent-Length: 12\r\nConnection: close\r\n\r\nbad request\n")
        #expect(parse([Array("GET /items/1 HTTP/1.1\r\nContent-Length: x\r\n\r\n".utf8)]).text.hasPrefix("HTTP/1.1 400 "))
        #expect(parse([Array("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n".utf8)]).text.hasPrefix("HTTP/1.1 400 "))
    }

    @Test func aHeadOverTheLimitIsRefusedWith431() {
        let field = "X-Big: " + String(repeating: "a", count: LoopbackHTTPServer.maximumHeadBytes) + "\r\n"
        let result = parse([Array("GET /items/1 HTTP/1.1\r\n\(field)\r\n".utf8)])
        #expect(result.outcome == .close)
        #expect(result.text.hasPrefix("HTTP/1.1 431 Request Header Fields Too Large\r\n"))
        #expect(result.text.contains("\r\nConnection: close\r\n"))
        // Many small fields count too, and a head just under the limit is fine.
        let many = String(repeating: "A: b\r\n", count: LoopbackHTTPServer.maximumHeadBytes / 6 + 10)
        #expect(parse([Array("GET / HTTP/1.1\r\n\(many)\r\n".utf8)]).text.hasPrefix("HTTP/1.1 431 "))
        let under = String(repeating: "A: b\r\n", count: LoopbackHTTPServer.maximumHeadBytes / 12)
        #expect(parse([Array("GET /items/1 HTTP/1.1\r\n\(under)\r\n".utf8)]).text == item(1))
    }

    @Test func routesOnlyWhatTheyPromise() {
        func status(_ target: String) -> String {
            String(parse([Array("GET \(target) HTTP/1.1\r\n\r\n".utf8)]).text.prefix(12))
        }
        #expect(status("/items/0") == "HTTP/1.1 200")
        #expect(status("/items/999999999999999999") == "HTTP/1.1 200")
        #expect(status("/items/9999999999999999999") == "HTTP/1.1 404")  // 19 digits
        #expect(status("/items/") == "HTTP/1.1 404")
        #expect(status("/items/-1") == "HTTP/1.1 404")
        #expect(status("/items/1/x") == "HTTP/1.1 404")
        #expect(status("/status/200") == "HTTP/1.1 200")
        #expect(status("/status/599") == "HTTP/1.1 599")
        #expect(status("/status/199") == "HTTP/1.1 404")
        #expect(status("/status/600") == "HTTP/1.1 404")
        #expect(status("/status/20") == "HTTP/1.1 404")
        #expect(status("/") == "HTTP/1.1 404")
        let noContent = parse([Array("GET /status/204 HTTP/1.1\r\n\r\n".utf8)]).text
        #expect(noContent == "HTTP/1.1 204 No Content\r\nContent-Type: text/plain\r\n\r\n")
    }

    @Test func itemBodiesSayWhichItemAndVaryInLength() {
        #expect(LoopbackHTTPServer.itemBody(0).starts(with: Array("item 0\nthe quick brown fox".utf8)))
        #expect(LoopbackHTTPServer.itemBody(12345).starts(with: Array("item 12345\n".utf8)))
        #expect(LoopbackHTTPServer.itemBody(0).count == 135)
        #expect(LoopbackHTTPServer.itemBody(255).count == 6 + 3 + 128 + 255)
        for item in [0, 1, 9, 10, 255, 256, 99_999, Int.max / 2] {
            #expect(LoopbackHTTPServer.itemBody(item).count == LoopbackHTTPServer.itemBodyLength(item))
        }
    }
}
