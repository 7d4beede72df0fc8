import CLLHTTP
import Testing

@testable import UVHTTP1

/// The HTTP/1.1 response decoder, fed bytes directly (no socket).
///
/// Tests named `llhttpAlone…` run bare llhttp 8.1 (strict) on the same input first: they show which
/// checks are the decoder's own, and will flag a newer llhttp that changes behaviour.
@Suite(.tags(.unit)) struct ResponseParserTests {
    // MARK: - Framing

    @Test func contentLengthBody() {
        let input = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello"
        let result = decode(input)
        #expect(result.error == nil)
        #expect(result.consumed == input.utf8.count)
        #expect(result.events == [
            .head(head(200, "OK", [("Content-Type", "text/plain"), ("Content-Length", "5")])),
            .body(Array("hello".utf8)),
            .end(trailers: []),
        ])
        #expect(result.decoder.isComplete)
        #expect(result.decoder.keepAlive)
    }

    @Test func chunkedWithTrailers() {
        let input = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\nX-Checksum: abc\r\nX-Other:  v \r\n\r\n"
        let result = decode(input)
        #expect(result.error == nil)
        #expect(result.consumed == input.utf8.count)
        #expect(result.events == [
            .head(head(200, "OK", [("Transfer-Encoding", "chunked")])),
            .body(Array("hello world".utf8)),
            .end(trailers: [HeaderField(name: "X-Checksum", value: "abc"), HeaderField(name: "X-Other", value: "v")]),
        ])
        #expect(result.decoder.keepAlive)
    }

    @Test func chunkExtensionsAreIgnored() {
        for size in ["5;name", "5;name=value", "5;a;b", "5;q=\"quoted value\""] {
            let result = decode("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\(size)\r\nhello\r\n0;last=1\r\n\r\n")
            #expect(result.error == nil, "\(size)")
            #expect(result.merged.contains(.body(Array("hello".utf8))), "\(size)")
        }
    }

    /// llhttp 8.1 refuses a second chunk extension after one with a value ("5;a=b;c=d"), though
    /// RFC 9112 §7.1.1 allows it. Documented limitation; this test flags a fixed llhttp.
    @Test func llhttpAloneRefusesSecondChunkExtensionAfterAValue() {
        let result = decode("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;a=b;c=d\r\nhello\r\n0\r\n\r\n")
        #expect(result.error?.kind == .malformed)
    }

    @Test func eofFramedBodyEndsAtFinish() {
        let input = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end"
        let result = decode(input, eof: false)
        #expect(result.consumed == input.utf8.count)
        #expect(!result.decoder.isComplete)
        #expect(result.events.last == .body(Array("until the end".utf8)))
        var events: [ResponseEvent] = []
        #expect(throws: Never.self) { try result.decoder.finish(into: &events) }
        #expect(events == [.end(trailers: [])])
        #expect(result.decoder.isComplete)
        #expect(!result.decoder.keepAlive)
    }

    @Test func http10WithoutKeepAlive() {
        let result = decode("HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nhi")
        #expect(result.error == nil)
        #expect(result.decoder.isComplete)
        #expect(result.heads.first?.versionMinor == 0)
        #expect(result.heads.first?.keepAlive == false)
        #expect(!result.decoder.keepAlive)
    }

    @Test func http10WithKeepAlive() {
        let result = decode("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nhi")
        #expect(result.decoder.isComplete)
        #expect(result.decoder.keepAlive)
    }

    @Test func http10KeepAliveWithEOFBodyIsNotKeptAlive() {
        let result = decode("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n\r\nhi", eof: true)
        #expect(result.decoder.isComplete)
        #expect(!result.decoder.keepAlive)
    }

    @Test func connectionClose() {
        let result = decode("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
        #expect(result.decoder.isComplete)
        #expect(!result.decoder.keepAlive)
    }

    @Test func keepAliveIsFalseUntilTheEnd() {
        let result = decode("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhel")
        #expect(result.heads.first?.keepAlive == true)
        #expect(!result.decoder.keepAlive)
    }

    // MARK: - Responses without a body

    @Test func headResponseWithContentLengthHasNoBody() {
        let input = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n"
        let result = decode(input + "HTTP/1.1", toHEAD: true)
        #expect(result.error == nil)
        #expect(result.consumed == input.utf8.count)
        #expect(result.events == [.head(head(200, "OK", [("Content-Length", "5")])), .end(trailers: [])])
        #expect(result.decoder.keepAlive)
    }

    /// Without a Content-Length, llhttp_should_keep_alive() at headers-complete would call the
    /// response EOF-framed; a HEAD response has no body, so the connection stays reusable.
    @Test func headResponseWithoutContentLengthKeepsAlive() {
        let result = decode("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n", toHEAD: true)
        #expect(result.decoder.isComplete)
        #expect(result.heads.first?.keepAlive == true)
        #expect(result.decoder.keepAlive)
    }

    @Test func headResponseWithChunkedHasNoBody() {
        let input = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        let result = decode(input + "0\r\n\r\n", toHEAD: true)
        #expect(result.consumed == input.utf8.count)
        #expect(result.decoder.isComplete)
    }

    /// Strict llhttp 8.1 reads a Content-Length body after a 204 and waits for one after a 304.
    @Test func llhttpAloneReadsBodyOf204And304() {
        #expect(rawLLHTTP("HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n").messageComplete == false)
        #expect(rawLLHTTP("HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n").messageComplete == false)
    }

    @Test(arguments: [204, 304])
    func noBodyFor204And304WithContentLength(status: Int) {
        let input = "HTTP/1.1 \(status) X\r\nContent-Length: 5\r\n\r\n"
        let result = decode(input + "HTTP/")
        #expect(result.error == nil)
        #expect(result.consumed == input.utf8.count)
        #expect(result.events == [.head(head(status, "X", [("Content-Length", "5")])), .end(trailers: [])])
        #expect(result.decoder.keepAlive)
    }

    // MARK: - Interim responses

    @Test func continueAndEarlyHintsBeforeTheFinalResponse() {
        let input = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
        let result = decode(input)
        #expect(result.error == nil)
        #expect(result.consumed == input.utf8.count)
        #expect(result.events == [
            .informational(head(100, "Continue", [])),
            .informational(head(103, "Early Hints", [("Link", "</a.css>; rel=preload")])),
            .head(head(200, "OK", [("Content-Length", "2")])),
            .body(Array("ok".utf8)),
            .end(trailers: []),
        ])
        #expect(result.decoder.keepAlive)
    }

    @Test func interimResponseWithContentLengthHasNoBody() {
        let result = decode("HTTP/1.1 100 Continue\r\nContent-Length: 3\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n")
        #expect(result.error == nil)
        #expect(result.decoder.isComplete)
    }

    /// Strict llhttp refuses any byte after a message that is not keep-alive; the decoder resets
    /// the parser after each 1xx, and the interim `close` still makes the connection unusable.
    @Test func interimConnectionCloseIsRemembered() {
        let result = decode("HTTP/1.1 100 Continue\r\nConnection: close\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        #expect(result.error == nil)
        #expect(result.decoder.isComplete)
        #expect(result.heads.last?.keepAlive == true)
        #expect(!result.decoder.keepAlive)
    }

    @Test func switchingProtocolsIsRefused() {
        let result = decode("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: upgrade\r\n\r\n")
        #expect(result.error?.kind == .upgradeRefused)
        #expect(result.events.isEmpty)
    }

    @Test func bare101IsRefused() {
        #expect(decode("HTTP/1.1 101 Switching Protocols\r\n\r\n").error?.kind == .upgradeRefused)
    }

    // MARK: - Where decoding stops

    @Test func pipelinedBytesAreNotConsumed() throws {
        let first = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\none"
        let second = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\ntwo\r\n0\r\n\r\n"
        let input = Array((first + second).utf8)
        let decoder = ResponseParser(options: .client())
        var events: [ResponseEvent] = []
        let consumed = try input.withUnsafeBytes { try decoder.feed($0, into: &events) }
        #expect(consumed == first.utf8.count)
        #expect(events.last == .end(trailers: []))
        // Complete: nothing more is taken until the next response is expected (feeding before
        // that traps: ResponseParserMisuseTests).
        #expect(decoder.isComplete)
        #expect(events.count == 3)
        decoder.expectResponse(toHEAD: false)
        events = []
        let rest = try input.withUnsafeBytes { try decoder.feed(UnsafeRawBufferPointer(rebasing: $0[consumed...]), into: &events) }
        #expect(rest == second.utf8.count)
        #expect(events == [.head(head(200, "OK", [("Transfer-Encoding", "chunked")])), .body(Array("two".utf8)), .end(trailers: [])])
    }

    @Test func pipelinedBytesAfterBodylessResponseAreNotConsumed() {
        let first = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
        let result = decode(first + "garbage")
        #expect(result.error == nil)
        #expect(result.consumed == first.utf8.count)
    }

    @Test func byteAtATimeEqualsOneShot() {
        let inputs = [
            "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A: 1\r\n\r\nhello",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n2\r\nde\r\n0\r\nT: v\r\n\r\n",
            "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nLocation: /x\r\nContent-Length: 1\r\n\r\nz",
            "HTTP/1.1 200 OK\r\nX-Folded: a  \r\n  b\r\n\tc\r\nContent-Length: 0\r\n\r\n",
            "HTTP/1.0 200 OK\r\nServer: x\r\n\r\nbody until eof",
            "HTTP/1.1 200 OK\r\nA: b\nContent-Length: 0\r\n\r\n",
            "HTTP/1.1 200 OK\nContent-Length: 0\r\n\r\n",
            "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nshort",
            "HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n3;x=y\nabc\n2\r\nde\n0\nT: v\n\n",
            "HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\ncontent-length: 2\r\n\r\nab",
            "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nab",
            "HTTP/1.1 200 OK\r\nA: b\rContent-Length: 0\r\n\r\n",
        ]
        for input in inputs {
            let whole = decode(input, eof: true)
            let bytewise = decode(input, pieces: 1, eof: true)
            #expect(whole.merged == bytewise.merged, "\(input.debugDescription)")
            #expect(whole.error?.kind == bytewise.error?.kind, "\(input.debugDescription)")
            if whole.error == nil { #expect(whole.consumed == bytewise.consumed, "\(input.debugDescription)") }
            for split in 1..<input.utf8.count {
                let two = decode(input, splitAt: split, eof: true)
                #expect(whole.merged == two.merged, "\(input.debugDescription) split at \(split)")
                #expect(whole.error?.kind == two.error?.kind, "\(input.debugDescription) split at \(split)")
            }
        }
    }

    @Test func bodyBytesOfOneFeedAreMerged() {
        let result = decode("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n1\r\nb\r\n1\r\nc\r\n0\r\n\r\n")
        #expect(result.events.filter { if case .body = $0 { true } else { false } } == [.body(Array("abc".utf8))])
    }

    // MARK: - End of stream

    @Test func truncatedContentLengthBody() {
        let result = decode("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello", eof: true)
        #expect(result.error?.kind == .truncatedBody)
        #expect(result.merged.last == .body(Array("hello".utf8)))
    }

    @Test func truncatedChunkedBody() {
        #expect(decode("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel", eof: true).error?.kind == .truncatedBody)
        #expect(decode("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n", eof: true).error?.kind == .truncatedBody)
        #expect(decode("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nT: v\r\n", eof: true).error?.kind == .truncatedBody)
    }

    /// EOF inside a head after some bytes is `truncatedBody`, not `closedBeforeResponse`: the
    /// server did start answering, so the request must not be retried as if unsent.
    @Test func truncatedHead() {
        let result = decode("HTTP/1.1 200 OK\r\nContent-Le", eof: true)
        #expect(result.error?.kind == .truncatedBody)
        #expect(result.decoder.hasReceivedBytes)
        #expect(decode("H", eof: true).error?.kind == .truncatedBody)
    }

    @Test func closedAfterInterimResponse() {
        let result = decode("HTTP/1.1 100 Continue\r\n\r\n", eof: true)
        #expect(result.error == HTTP1ParseError(kind: .truncatedBody, reason: "connection closed after an interim response", offset: 25))
        #expect(result.events == [.informational(head(100, "Continue", []))])
    }

    @Test func closedBeforeResponse() throws {
        let decoder = ResponseParser(options: .client())
        var events: [ResponseEvent] = []
        #expect(!decoder.hasReceivedBytes)
        #expect(throws: HTTP1ParseError(kind: .closedBeforeResponse, reason: "connection closed before any byte of the response")) {
            try decoder.finish(into: &events)
        }
        // The same on a reused connection, after a complete response.
        let reused = decode("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n").decoder
        reused.expectResponse(toHEAD: false)
        #expect(!reused.hasReceivedBytes)
        #expect(throws: HTTP1ParseError.self) { try reused.finish(into: &events) }
        #expect(events.isEmpty)
        do { try reused.finish(into: &events) } catch { #expect(error.kind == .closedBeforeResponse) }
    }

    @Test func finishAfterCompletionDoesNothing() throws {
        let result = decode("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        var events: [ResponseEvent] = []
        try result.decoder.finish(into: &events)
        #expect(events.isEmpty)
        #expect(result.decoder.keepAlive)
    }

    // MARK: - Limits

    @Test func headExactlyAtTheLimitAndOneOver() {
        let input = "HTTP/1.1 200 OK\r\nX-Pad: abcdefgh\r\nContent-Length: 0\r\n\r\n"
        let size = input.utf8.count
        for pieces in [nil, 1] as [Int?] {
            let atLimit = decode(input, limits: .client(maxHeaderBytes: size), pieces: pieces)
            #expect(atLimit.error == nil)
            #expect(atLimit.decoder.isComplete)
            let over = decode(input, limits: .client(maxHeaderBytes: size - 1), pieces: pieces)
            #expect(over.error?.kind == .headersTooLarge)
            #expect(over.events.isEmpty)
        }
    }

    @Test func eachInterimHeadHasItsOwnLimit() {
        let interim = "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"
        let final = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
        let limit = max(interim.utf8.count, final.utf8.count)
        #expect(decode(interim + interim + final, limits: .client(maxHeaderBytes: limit)).error == nil)
        #expect(decode(interim + final, limits: .client(maxHeaderBytes: interim.utf8.count - 1)).error?.kind == .headersTooLarge)
    }

    /// The limit is enforced while the head arrives: an endless field never grows the buffers
    /// beyond the limit.
    @Test func endlessHeadIsCutAtTheLimit() throws {
        let decoder = ResponseParser(options: .client(maxHeaderBytes: 1024))
        var events: [ResponseEvent] = []
        _ = try Array("HTTP/1.1 200 OK\r\nX-Endless: ".utf8).withUnsafeBytes { try decoder.feed($0, into: &events) }
        let filler = [UInt8](repeating: UInt8(ascii: "a"), count: 100)
        var thrown: HTTP1ParseError?
        for _ in 0..<50 {
            do { _ = try filler.withUnsafeBytes { try decoder.feed($0, into: &events) } } catch { thrown = error as? HTTP1ParseError; break }
            #expect(decoder.record.bytes.count <= 1024)
        }
        #expect(thrown?.kind == .headersTooLarge)
        #expect(decoder.record.bytes.count <= 1024)
    }

    /// A trailer section has its own budget of maxHeaderBytes raw bytes, final empty line included.
    @Test func trailerSectionExactlyAtTheLimitAndOneOver() {
        let head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-Pad: \(String(repeating: "p", count: 40))\r\n\r\n"
        let limits = ResponseParser.Options.client(maxHeaderBytes: head.utf8.count)
        /// "X-Trailer: ttt…\r\n\r\n" of `size` bytes.
        func trailerSection(_ size: Int) -> String { "X-Trailer: \(String(repeating: "t", count: size - 15))\r\n\r\n" }
        for pieces in [nil, 1] as [Int?] {
            let atLimit = decode(head + "1\r\nx\r\n0\r\n" + trailerSection(head.utf8.count), limits: limits, pieces: pieces)
            #expect(atLimit.error == nil)
            #expect(atLimit.decoder.isComplete)
            let over = decode(head + "1\r\nx\r\n0\r\n" + trailerSection(head.utf8.count + 1), limits: limits, pieces: pieces)
            #expect(over.error?.kind == .headersTooLarge)
            #expect(over.merged.last == .body(Array("x".utf8)))
        }
    }

    @Test func bodyExactlyAtTheLimitAndOneOver() {
        let limits = ResponseParser.Options.client(maxBodyBytes: 5)
        for pieces in [nil, 1, 2] as [Int?] {
            #expect(decode("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", limits: limits, pieces: pieces).error == nil)
            #expect(decode("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhel\r\n2\r\nlo\r\n0\r\n\r\n", limits: limits, pieces: pieces).error == nil)
            let over = decode("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhel\r\n3\r\nlo!\r\n0\r\n\r\n", limits: limits, pieces: pieces)
            #expect(over.error?.kind == .bodyTooLarge)
            // What fits is delivered, never a byte more, however the reads were split.
            #expect(over.merged.last == .body(Array("hello".utf8)))
            let eofFramed = decode("HTTP/1.1 200 OK\r\n\r\nhello!", limits: limits, pieces: pieces, eof: true)
            #expect(eofFramed.error?.kind == .bodyTooLarge)
            #expect(eofFramed.merged.last == .body(Array("hello".utf8)))
        }
    }

    @Test func contentLengthAnnouncingTooMuch() {
        let result = decode("HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\n", limits: .client(maxBodyBytes: 5))
        #expect(result.error?.kind == .bodyTooLarge)
        #expect(result.events == [.head(head(200, "OK", [("Content-Length", "6")]))])
        // A HEAD response's Content-Length announces nothing to read.
        #expect(decode("HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\n", toHEAD: true, limits: .client(maxBodyBytes: 5)).error == nil)
    }

    // MARK: - Status line

    @Test func llhttpAloneAcceptsBadStatusLines() {
        #expect(rawLLHTTP("HTTP/1.1 200 OK\nContent-Length: 0\r\n\r\n").messageComplete)
        #expect(rawLLHTTP("HTTP/1.1 20 OK\r\nContent-Length: 0\r\n\r\n").error == HPE_OK)
        #expect(rawLLHTTP("HTTP/1.1 0200 OK\r\nContent-Length: 0\r\n\r\n").error == HPE_OK)
        #expect(rawLLHTTP("HTTP/1.1  200 OK\r\nContent-Length: 0\r\n\r\n").messageComplete)
        #expect(rawLLHTTP("HTTP/2.0 200 OK\r\nContent-Length: 0\r\n\r\n").messageComplete)
        #expect(rawLLHTTP("\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n").messageComplete)
        #expect(rawLLHTTP("HTTP/1.1 200 O\u{1}K\r\nContent-Length: 0\r\n\r\n").messageComplete)
        #expect(rawLLHTTP("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\n").messageComplete)
    }

    @Test(arguments: [
        "HTTP/1.1 20 OK\r\nContent-Length: 0\r\n\r\n",    // status code not three digits
        "HTTP/1.1 0200 OK\r\nContent-Length: 0\r\n\r\n",
        "HTTP/1.1  200 OK\r\nContent-Length: 0\r\n\r\n",  // two spaces: llhttp reads status 0
        "HTTP/1.1 099 Low\r\nContent-Length: 0\r\n\r\n",
        "HTTP/2.0 200 OK\r\nContent-Length: 0\r\n\r\n",
        "HTTP/0.9 200 OK\r\nContent-Length: 0\r\n\r\n",
        "HTTP/1.2 200 OK\r\nContent-Length: 0\r\n\r\n",
        "http/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
        "HTTP/1.1 200\tOK\r\nContent-Length: 0\r\n\r\n",
        "HTTP/1.1 200 O\u{1}K\r\nContent-Length: 0\r\n\r\n",
        "HTTP/1.1 200 O\u{7F}K\r\nContent-Length: 0\r\n\r\n",
        "\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",  // llhttp skips empty lines before it
        "\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
        "HTTP/1.1 200 OK\rContent-Length: 0\r\n\r\n",     // a bare CR ends no line
        "HTTP/1.1 200 OK\r\nA: b\rContent-Length: 0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\r\n",
        "HTTP/1.1 20\nContent-Length: 0\r\n\r\n",          // a bare LF ends a short status line
    ])
    func malformedHead(input: String) {
        #expect(decode(input).error?.kind == .malformed)
        // The line ending is tracked across reads too.
        #expect(decode(input, pieces: 1).error?.kind == .malformed)
        #expect(decode(input, pieces: 1).events.isEmpty)
    }

    @Test func statusLineVariantsThatAreFine() {
        let empty = decode("HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n")
        #expect(empty.heads.first?.reason == "")
        #expect(decode("HTTP/1.1 200 \r\nContent-Length: 0\r\n\r\n").heads.first?.reason == "")
        #expect(decode("HTTP/1.1 404 Not\tFound \u{FF}\r\nContent-Length: 0\r\n\r\n").heads.first?.reason == "Not\tFound \u{FF}")
        // 600...999 are passed through (RFC 9110 §15: the caller treats them as 5xx).
        #expect(decode("HTTP/1.1 600 Odd\r\nContent-Length: 0\r\n\r\n").heads.first?.status == 600)
    }

    // MARK: - Bare LF line ends

    /// RFC 9112 §2.2 lets a recipient take a bare LF for a line end; curl, Go, Python and
    /// browsers do, and 86 of the 231 replies of curl's own test suite end their lines so.
    /// llhttp 8.1 (strict) refuses them in field and chunk lines; the decoder accepts them in
    /// the head, the chunk framing and the trailers, and never touches body bytes.
    @Test(arguments: [
        // (input, body, trailers)
        ("HTTP/1.1 200 OK\nContent-Length: 5\nX-A: 1\n\nhello", "hello", 0),
        ("HTTP/1.1 200 OK\r\nX-A: 1\nContent-Length: 5\r\n\nhello", "hello", 0),
        ("HTTP/1.1 200\nContent-Length: 5\n\nhello", "hello", 0),
        ("HTTP/1.1 200 OK\nContent-Length: 6\n\na\nb\r\nc", "a\nb\r\nc", 0),
        ("HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n5\nhello\n6;x=y\n world\n0\nT: v\n\n", "hello world", 1),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\n6\n world\r\n0\r\n\n", "hello world", 0),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\n\n\n\r\n\n0\n\n", "\n\n\r\n", 0),
        ("HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n21;ext=1\n\(String(repeating: "c", count: 32))\n\r\n0\n\n", String(repeating: "c", count: 32) + "\n", 0),
        ("HTTP/1.1 100 Continue\n\nHTTP/1.1 200 OK\nContent-Length: 2\n\nok", "ok", 0),
        ("HTTP/1.0 200 OK\nServer: x\n\nuntil the end\n", "until the end\n", 0),
    ])
    func bareLFEndsALine(input: String, body: String, trailers: Int) {
        let whole = decode(input, eof: true)
        #expect(whole.error == nil, "\(input.debugDescription)")
        #expect(whole.body == Array(body.utf8), "\(input.debugDescription)")
        #expect(whole.trailers.count == trailers, "\(input.debugDescription)")
        for split in 1..<input.utf8.count {
            let two = decode(input, splitAt: split, eof: true)
            #expect(two.merged == whole.merged, "\(input.debugDescription) split at \(split)")
        }
        #expect(decode(input, pieces: 1, eof: true).merged == whole.merged, "\(input.debugDescription) byte by byte")
    }

    @Test func bareLFFieldsAreTheSameFields() {
        let crlf = decode("HTTP/1.1 200 OK\r\nServer: a \r\nX-Empty:\r\nContent-Length: 0\r\n\r\n")
        let lf = decode("HTTP/1.1 200 OK\nServer: a \nX-Empty:\nContent-Length: 0\n\n")
        #expect(crlf.error == nil)
        #expect(lf.heads == crlf.heads)
        #expect(lf.heads.first?.headers.firstValue(named: "server") == "a")
    }

    @Test func obsFoldAfterABareLF() {
        let crlf = decode("HTTP/1.1 200 OK\r\nServer: a\r\n  folded\r\nContent-Length: 0\r\n\r\n")
        let lf = decode("HTTP/1.1 200 OK\nServer: a\n  folded\nContent-Length: 0\n\n")
        #expect(lf.heads == crlf.heads)
        #expect(lf.heads.first?.headers.firstValue(named: "server") == "a folded")
    }

    @Test func bareLFTrailerSection() {
        let result = decode("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nA: b\nC: d\r\n\n")
        #expect(result.error == nil)
        #expect(result.trailers == [HeaderField(name: "A", value: "b"), HeaderField(name: "C", value: "d")])
        #expect(decode("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\n", pieces: 1).decoder.isComplete)
    }

    /// What llhttp 8.1 alone does with bare LFs in chunk lines: the decoder's own work.
    @Test func llhttpAloneRefusesBareLFChunkLines() {
        // 8.1 says HPE_INVALID_CHUNK_SIZE and HPE_STRICT, 9.x HPE_CR_EXPECTED.
        #expect(rawLLHTTP("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\nhello\r\n0\r\n\r\n").error != HPE_OK)
        #expect(rawLLHTTP("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\n0\r\n\r\n").error != HPE_OK)
        #expect(rawLLHTTP("HTTP/1.1 200 OK\r\nA: b\nContent-Length: 0\r\n\r\n").error != HPE_OK)
    }

    @Test(arguments: [
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\rhello\r\n0\r\n\r\n",  // bare CR in a chunk line
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\nhelloX\n0\n\n",      // data longer than its size
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nILLEGAL\nabc\n0\n\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10000000000000000\nabc\n0\n\n",  // overflows 64 bits
    ])
    func malformedBareLFChunkFraming(input: String) {
        #expect(decode(input).error?.kind == .malformed)
        #expect(decode(input, pieces: 1).error?.kind == .malformed)
    }

    // MARK: - Fields

    @Test func headerFieldsAcrossReadSplits() {
        let input = "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nX-Request-Identifier: 0123456789abcdef\r\nContent-Length: 0\r\n\r\n"
        let expected = [("Content-Type", "text/html; charset=utf-8"), ("X-Request-Identifier", "0123456789abcdef"), ("Content-Length", "0")]
        for pieces in 1...7 {
            #expect(decode(input, pieces: pieces).heads == [head(200, "OK", expected)], "pieces of \(pieces)")
        }
    }

    @Test func llhttpAloneAcceptsEmptyFieldNames() {
        #expect(rawLLHTTP("HTTP/1.1 200 OK\r\n: v\r\nContent-Length: 0\r\n\r\n").messageComplete)
        #expect(rawLLHTTP("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n: v\r\n\r\n").messageComplete)
    }

    @Test func emptyFieldNameIsMalformed() {
        #expect(decode("HTTP/1.1 200 OK\r\n: v\r\nContent-Length: 0\r\n\r\n").error?.kind == .malformed)
        #expect(decode("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n: v\r\n\r\n").error?.kind == .malformed)
    }

    @Test func valueWhitespaceIsTrimmed() {
        let result = decode("HTTP/1.1 200 OK\r\nA: \t b c \t \r\nB:\r\nC:   \r\nContent-Length: 0\r\n\r\n")
        #expect(result.heads.first?.headers == [
            HeaderField(name: "A", value: "b c"),
            HeaderField(name: "B", value: ""),
            HeaderField(name: "C", value: ""),
            HeaderField(name: "Content-Length", value: "0"),
        ])
    }

    /// llhttp 8.1 passes a folded line as separate value pieces, dropping the CRLF but keeping the
    /// continuation's whitespace ("b  ", "\t c"); RFC 9112 §5.2 wants one SP in place of each fold.
    @Test func obsFoldBecomesOneSpace() {
        let input = "HTTP/1.1 200 OK\r\nX-Folded: first  \r\n   second\r\n\tthird \r\nX-Empty-Then-Folded:\r\n only\r\nContent-Length: 0\r\n\r\n"
        let expected: ReceivedFields = [HeaderField(name: "X-Folded", value: "first second third"),
                        HeaderField(name: "X-Empty-Then-Folded", value: "only"),
                        HeaderField(name: "Content-Length", value: "0")]
        #expect(decode(input).heads.first?.headers == expected)
        for split in 1..<input.utf8.count {
            #expect(decode(input, splitAt: split).heads.first?.headers == expected, "split at \(split)")
        }
        #expect(decode(input, pieces: 1).heads.first?.headers == expected)
    }

    @Test func obsFoldInTrailers() {
        let result = decode("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nT: a\r\n b\r\n\r\n")
        #expect(result.events.last == .end(trailers: [HeaderField(name: "T", value: "a b")]))
    }

    @Test(arguments: [
        "HTTP/1.1 200 OK\r\nA: b\0c\r\nContent-Length: 0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nA: b\rc\r\nContent-Length: 0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nA: b\u{7F}\r\nContent-Length: 0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nA : b\r\nContent-Length: 0\r\n\r\n",
        "HTTP/1.1 200 OK\r\n A: b\r\nContent-Length: 0\r\n\r\n",
    ])
    func invalidFieldBytes(input: String) {
        #expect(decode(input).error?.kind == .malformed)
    }

    @Test func llhttpsErrnoIsAFieldAndTheReasonPlainWords() throws {
        let error = try #require(decode("HTTP/1.1 200 OK\r\nA: b\0c\r\nContent-Length: 0\r\n\r\n").error)
        #expect(error.llhttpCode == "HPE_INVALID_HEADER_TOKEN")
        #expect(error.reason == "invalid header value char", "llhttp's reason, lower-cased: \(error.reason)")
        #expect(error.description == "malformed: invalid header value char")
        // The parser's own checks have no llhttp code.
        let own = try #require(decode("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab").error)
        #expect(own.llhttpCode == nil && !own.reason.contains("HPE_"), "\(own)")
    }

    @Test func obsTextInValuesIsKeptAsReceived() {
        let input: [UInt8] = Array("HTTP/1.1 200 OK\r\nA: caf".utf8) + [0xE9] + Array("\r\nContent-Length: 0\r\n\r\n".utf8)
        let headers = decode(input).heads.first?.headers
        #expect(headers?.first?.value == "caf\u{FFFD}")
        #expect(headers?.withField(at: 0) { _, value in Array(value) } == Array("caf".utf8) + [0xE9])
    }

    // MARK: - Content-Length and Transfer-Encoding

    /// RFC 9110 §8.6: a Content-Length repeated with the same decimal value, in several fields
    /// or as a list, is that one value (curl agrees); llhttp 8.1 refuses every repeat and list.
    @Test(arguments: [
        "Content-Length: 3\r\nContent-Length: 3\r\n",
        "Content-Length: 3, 3\r\n",
        "Content-Length: 3,03,3\r\ncontent-length: 3 ,\t3\r\n",
        "Content-Length: 3\r\nX-Between: 1\r\nCONTENT-LENGTH: 3\r\n",
    ])
    func repeatedIdenticalContentLengthIsOneValue(fields: String) {
        let input = "HTTP/1.1 200 OK\r\n\(fields)\r\nabcdef"
        #expect(rawLLHTTP(input).error != HPE_OK)
        let result = decode(input)
        #expect(result.error == nil)
        #expect(result.body == Array("abc".utf8))
        #expect(result.consumed == input.utf8.count - 3)
        #expect(result.decoder.announcedBodyLength == 3)
        #expect(result.decoder.keepAlive)
        // The fields are delivered as received.
        #expect(result.heads.first?.headers.count == fields.components(separatedBy: "\r\n").count - 1)
    }

    @Test(arguments: [
        "Content-Length: 1\r\nContent-Length: 2\r\n",   // differing values stay an error
        "Content-Length: 1, 2\r\n",
        "Content-Length: 6badness\r\nContent-Length: 6\r\n",
        "Content-Length: 1\r\n 2\r\n",
        "Content-Length: -1\r\n",
        "Content-Length: \r\n",
        "Content-Length: ,\r\n",
        "Content-Length: 1 1\r\n",
        "Content-Length: 0x10\r\n",
        "Content-Length: 36893488147419103232\r\n",    // 2^65
        "Content-Length: 9223372036854775808\r\n",     // 2^63
    ])
    func invalidContentLengthIsMalformed(fields: String) {
        #expect(decode("HTTP/1.1 200 OK\r\n\(fields)\r\nab").error?.kind == .malformed)
        #expect(decode("HTTP/1.1 200 OK\r\n\(fields)\r\nab", pieces: 1).error?.kind == .malformed)
    }

    @Test func aHeadWithManyMoreFieldsThanTheRecordFirstHoldsKeepsThemAll() {
        let names = (0..<100).map { "X-Field-\($0)" }
        let head = "HTTP/1.1 200 OK\r\n" + names.map { "\($0): v\($0)\r\n" }.joined() + "Content-Length: 0\r\n\r\n"
        for pieces in [nil, 1] as [Int?] {
            let result = decode(head, pieces: pieces)
            #expect(result.error == nil)
            #expect(result.heads.first?.headers.map(\.name) == names + ["Content-Length"])
            #expect(result.heads.first?.headers.map(\.value) == names.map { "v\($0)" } + ["0"])
        }
    }

    @Test func contentLengthEdgeValues() {
        #expect(decode("HTTP/1.1 200 OK\r\nContent-Length: 0\r\nContent-Length: 00\r\n\r\n").decoder.isComplete)
        let large = decode("HTTP/1.1 200 OK\r\nContent-Length: 9223372036854775807\r\n\r\nab")
        #expect(large.error == nil)
        #expect(large.decoder.announcedBodyLength == Int64.max)
        // Trailing whitespace is OWS; a Content-Length in the trailers frames nothing.
        #expect(decode("HTTP/1.1 200 OK\r\nContent-Length: 2   \r\n\r\nab").body == Array("ab".utf8))
        // A folded value frames the body as the joined value (the fold's bytes, not the raw line's).
        let folded = decode("HTTP/1.1 200 OK\r\nServer: a\r\n b\r\nContent-Length:\r\n 2\r\n\r\nabc")
        #expect(folded.error == nil)
        #expect(folded.body == Array("ab".utf8))
        #expect(folded.decoder.announcedBodyLength == 2)
        let trailer = decode("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\nContent-Length: 7\r\n\r\n")
        #expect(trailer.error == nil)
        #expect(trailer.body == Array("ab".utf8))
    }

    @Test func contentLengthWithTransferEncodingIsMalformed() {
        #expect(decode("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\n\r\n").error?.kind == .malformed)
        #expect(decode("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 1\r\n\r\n1\r\na\r\n0\r\n\r\n").error?.kind == .malformed)
    }

    /// llhttp 8.1 reads these as EOF-framed ("gzip", "chunked, gzip") or as chunked
    /// ("gzip, chunked", "chunked, chunked", two fields): we asked for no transfer coding.
    @Test func llhttpAloneAcceptsTransferCodingsOtherThanChunked() {
        #expect(rawLLHTTP("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n").messageComplete)
        #expect(rawLLHTTP("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\nabc").error == HPE_OK)
    }

    @Test(arguments: [
        "Transfer-Encoding: gzip\r\n",
        "Transfer-Encoding: chunked, gzip\r\n",
        "Transfer-Encoding: gzip, chunked\r\n",
        "Transfer-Encoding: chunked, chunked\r\n",
        "Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n",
        "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n",
        "Transfer-Encoding: identity\r\n",
        "Transfer-Encoding:\r\n",
        "Transfer-Encoding: gzip,\r\n chunked\r\n",
    ])
    func transferCodingsOtherThanChunkedAreMalformed(field: String) {
        #expect(decode("HTTP/1.1 200 OK\r\n\(field)\r\n0\r\n\r\n").error?.kind == .malformed)
    }

    @Test func transferEncodingSpellings() {
        #expect(decode("HTTP/1.1 200 OK\r\nTransfer-Encoding: ChUnKeD\r\n\r\n0\r\n\r\n").decoder.isComplete)
        #expect(decode("HTTP/1.1 200 OK\r\nTransfer-Encoding: , chunked\r\n\r\n0\r\n\r\n").decoder.isComplete)
        // An empty element after chunked is legal list syntax, but llhttp 8.1 then no longer sees
        // chunked as the final coding and would read to EOF: refused rather than guessed.
        #expect(decode("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked ,\r\n\r\n0\r\n\r\n").error?.kind == .malformed)
        // No body is read for HEAD, so the framing cannot be ambiguous.
        #expect(decode("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", toHEAD: true).decoder.isComplete)
    }

    @Test func transferEncodingInHTTP10IsMalformed() {
        #expect(decode("HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n").error?.kind == .malformed)
    }

    // MARK: - Lifecycle

    @Test func reuseForASecondResponse() throws {
        let decoder = ResponseParser(options: .client())
        var events: [ResponseEvent] = []
        decoder.expectResponse(toHEAD: true)
        let first = Array("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-First: 1\r\n\r\n".utf8)
        #expect(try first.withUnsafeBytes { try decoder.feed($0, into: &events) } == first.count)
        #expect(decoder.isComplete && decoder.keepAlive)
        decoder.expectResponse(toHEAD: false)
        #expect(!decoder.isComplete && !decoder.hasReceivedBytes && !decoder.keepAlive)
        events = []
        let second = Array("HTTP/1.1 404 Not Found\r\nContent-Length: 5\r\n\r\nnope!".utf8)
        #expect(try second.withUnsafeBytes { try decoder.feed($0, into: &events) } == second.count)
        #expect(events == [.head(head(404, "Not Found", [("Content-Length", "5")])), .body(Array("nope!".utf8)), .end(trailers: [])])
    }

    @Test func reuseAfterAResponseThatClosesTheConnection() throws {
        let decoder = decode("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n").decoder
        #expect(!decoder.keepAlive)
        decoder.expectResponse(toHEAD: false)
        var events: [ResponseEvent] = []
        let next = Array("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n".utf8)
        #expect(try next.withUnsafeBytes { try decoder.feed($0, into: &events) } == next.count)
        #expect(decoder.keepAlive)
    }

    /// Errors found by llhttp, by a callback and by the scanner all leave the decoder dead; after
    /// a scanner error llhttp itself would happily go on.
    @Test(arguments: [
        "HTTP/1.1 200 OK\r\nA: b\0\r\n\r\n",  // llhttp
        "HTTP/1.1 200 OK\r\n: v\r\n\r\n",      // callback
        "HTTP/1.1 200 OK\r\r",                  // scanner
    ])
    func deadDecoderRepeatsItsError(input: String) throws {
        let failing = decode(input)
        let error = try #require(failing.error)
        let decoder = failing.decoder
        var events: [ResponseEvent] = []
        let more = Array("\r\nContent-Length: 0\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n".utf8)
        #expect(throws: error) { _ = try more.withUnsafeBytes { try decoder.feed($0, into: &events) } }
        #expect(throws: error) { try decoder.finish(into: &events) }
        decoder.expectResponse(toHEAD: false)
        #expect(throws: error) { _ = try more.withUnsafeBytes { try decoder.feed($0, into: &events) } }
        #expect(throws: error) { try decoder.finish(into: &events) }
        #expect(events.isEmpty)
        #expect(!decoder.isComplete && !decoder.keepAlive)
    }

    @Test func eventsBeforeAnErrorAreKept() {
        let result = decode("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\nzz\r\n")
        #expect(result.error?.kind == .malformed)
        #expect(result.events == [.head(head(200, "OK", [("Transfer-Encoding", "chunked")])), .body(Array("abc".utf8))])
    }

    @Test func expectResponseInTheMiddleOfAResponseTraps() async {
        await #expect(processExitsWith: .failure) {
            let decoder = ResponseParser(options: .client())
            var events: [ResponseEvent] = []
            _ = try? Array("HTTP/1.1 200 OK\r\n".utf8).withUnsafeBytes { try decoder.feed($0, into: &events) }
            decoder.expectResponse(toHEAD: false)
        }
    }

    /// llhttp_get_error_reason is NULL on a parser that never failed; the decoder's message must
    /// not depend on it.
    @Test func nullErrorReasonIsHandled() {
        let parser = UnsafeMutablePointer<llhttp_t>.allocate(capacity: 1)
        defer { parser.deallocate() }
        let settings = UnsafeMutablePointer<llhttp_settings_t>.allocate(capacity: 1)
        defer { settings.deallocate() }
        llhttp_settings_init(settings)
        llhttp_init(parser, HTTP_RESPONSE, settings)
        #expect(llhttp_get_error_reason(parser) == nil)
        let error = ResponseParser.llhttpError(HPE_INTERNAL, parser: parser)
        #expect(error.kind == .malformed)
        #expect(error.llhttpCode == "HPE_INTERNAL")
        #expect(!error.reason.isEmpty && !error.reason.contains("HPE_"), "\(error.reason)")
    }


    @Test func announcedBodyLengthComesFromTheHead() {
        let cases: [(String, Bool, Int64?)] = [
            ("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", false, 5),
            ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", false, nil),
            ("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", true, 0),
            ("HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n", false, 0),
            ("HTTP/1.0 200 OK\r\n\r\nuntil EOF", false, nil),
        ]
        for (input, toHEAD, expected) in cases {
            let result = decode(input, toHEAD: toHEAD, eof: true)
            #expect(result.error == nil, "\(input)")
            #expect(result.decoder.announcedBodyLength == expected, "\(input)")
        }
    }
}

// MARK: - Helpers

/// What one decoding run produced.
private struct DecodeResult {
    var decoder: ResponseParser
    var events: [ResponseEvent] = []
    var consumed = 0
    var error: HTTP1ParseError?

    /// The events with neighbouring `.body` events joined, to compare runs fed in different pieces.
    var merged: [ResponseEvent] { events.mergingBodies }

    /// The heads delivered, interim and final.
    var heads: [ResponseHead] {
        events.compactMap {
            switch $0 {
            case .informational(let head), .head(let head): head
            default: nil
            }
        }
    }

    /// Every body byte delivered, in order.
    var body: [UInt8] {
        events.flatMap { event -> [UInt8] in
            if case .body(let bytes) = event { return bytes }
            return []
        }
    }

    /// The trailers of the `.end` event (empty without one).
    var trailers: [HeaderField] {
        for case .end(let trailers) in events { return Array(trailers) }
        return []
    }
}

/// Feeds `input` to a new decoder in pieces of `pieces` bytes (one piece if nil), or in two pieces
/// split at `splitAt`, stopping at completion or error; then calls `finish` if `eof`.
private func decode(_ input: [UInt8], toHEAD: Bool = false, limits: ResponseParser.Options = .client(),
                    pieces: Int? = nil, splitAt: Int? = nil, eof: Bool = false) -> DecodeResult {
    let decoder = ResponseParser(options: limits)
    decoder.expectResponse(toHEAD: toHEAD)
    var result = DecodeResult(decoder: decoder)
    var bounds: [Int] = []
    if let splitAt { bounds = [splitAt] } else if let pieces { bounds = Array(stride(from: pieces, to: input.count, by: pieces)) }
    bounds.append(input.count)
    var start = 0
    input.withUnsafeBytes { all in
        for end in bounds where end > start {
            // A response that ended with a piece: the pieces after it are left unconsumed.
            if decoder.isComplete { return }
            do throws(HTTP1ParseError) {
                let consumed = try decoder.feed(UnsafeRawBufferPointer(rebasing: all[start..<end]), into: &result.events)
                result.consumed += consumed
                if consumed < end - start { return }
            } catch {
                result.error = error
                return
            }
            start = end
        }
        if eof {
            do throws(HTTP1ParseError) { try decoder.finish(into: &result.events) } catch { result.error = error }
        }
    }
    return result
}

private func decode(_ input: String, toHEAD: Bool = false, limits: ResponseParser.Options = .client(),
                    pieces: Int? = nil, splitAt: Int? = nil, eof: Bool = false) -> DecodeResult {
    decode(Array(input.utf8), toHEAD: toHEAD, limits: limits, pieces: pieces, splitAt: splitAt, eof: eof)
}

/// A head with HTTP/1.1 and keep-alive.
private func head(_ status: Int, _ reason: String, _ fields: [(String, String)], keepAlive: Bool = true) -> ResponseHead {
    ResponseHead(versionMajor: 1, versionMinor: 1, status: status, reason: reason,
                 headers: ReceivedFields(fields.map { HeaderField(name: $0.0, value: $0.1) }), keepAlive: keepAlive)
}

/// Runs bare llhttp (strict, no callbacks but a message counter) over `input` in one call.
private func rawLLHTTP(_ input: String) -> (error: llhttp_errno_t, messageComplete: Bool) {
    let parser = UnsafeMutablePointer<llhttp_t>.allocate(capacity: 1)
    defer { parser.deallocate() }
    let settings = UnsafeMutablePointer<llhttp_settings_t>.allocate(capacity: 1)
    defer { settings.deallocate() }
    llhttp_settings_init(settings)
    settings.pointee.on_message_complete = { parser in
        parser!.pointee.data = UnsafeMutableRawPointer(bitPattern: 1)
        return Int32(HPE_PAUSED.rawValue)
    }
    llhttp_init(parser, HTTP_RESPONSE, settings)
    let bytes = Array(input.utf8)
    let error = bytes.withUnsafeBytes { llhttp_execute(parser, $0.baseAddress!.assumingMemoryBound(to: CChar.self), bytes.count) }
    return (error == HPE_PAUSED ? HPE_OK : error, parser.pointee.data != nil)
}
