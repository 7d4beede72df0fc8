import Testing

@testable import UVHTTP1

/// Each option of the request parser both ways, and the limits at their edges.
@Suite(.tags(.unit)) struct RequestParserOptionsTests {
    static let lenient = RequestParser.Options(allowsBareLF: true, allowsObsFold: true, allowsRepeatedContentLength: true)

    @Test func defaultsAreStrict() {
        let options = RequestParser.Options()
        #expect(options.maxHeaderBytes == 64 * 1024)
        #expect(options.maxTargetBytes == nil)
        #expect(options.maxBodyBytes == nil)
        #expect(!options.allowsBareLF && !options.allowsObsFold && !options.allowsRepeatedContentLength)
    }

    // MARK: - Bare LF

    @Test(arguments: [
        ("GET / HTTP/1.1\nHost: h\r\n\r\n", "\nHost"),
        ("GET / HTTP/1.1\r\nHost: h\n\r\n", "\n\r\n"),
        ("GET / HTTP/1.1\r\nHost: h\r\n\n", "\r\n\n"),
        ("\nGET / HTTP/1.1\r\nHost: h\r\n\r\n", "\nGET"),
    ])
    func bareLFInTheHead(input: String, marker: String) {
        let strict = parseRequests(input)
        #expect(strict.error?.kind == .malformed)
        let lfOffset = offset(of: marker, in: input) + (marker.hasPrefix("\r\n") ? 2 : 0)
        #expect(strict.error?.offset == lfOffset)
        #expect(strict.events.isEmpty)

        let lenient = parseRequests(input, options: Self.lenient)
        #expect(lenient.error == nil)
        #expect(lenient.events == [.head(requestHead("GET", "/", [("Host", "h")])), .end(trailers: [])])
    }

    @Test func bareLFInChunkedFramingAndTrailers() {
        let input = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\nabc\n0\r\nX: y\n\n"
        let strict = parseRequests(input)
        #expect(strict.error?.kind == .malformed)
        #expect(strict.error?.offset == offset(of: "\nabc", in: input))
        let lenient = parseRequests(input, options: Self.lenient)
        #expect(lenient.error == nil)
        #expect(lenient.events == [
            .head(requestHead("POST", "/", [("Transfer-Encoding", "chunked")], framing: .chunked)),
            .body(Array("abc".utf8)),
            .end(trailers: [HeaderField(name: "X", value: "y")]),
        ])
    }

    // MARK: - obs-fold

    @Test func obsFold() {
        let input = "GET / HTTP/1.1\r\nX-Long: first\r\n \t second \r\n\tthird\r\nHost: h\r\n\r\n"
        let strict = parseRequests(input)
        #expect(strict.error?.kind == .malformed)
        #expect(strict.error?.offset == offset(of: " \t second", in: input))
        #expect(strict.error?.reason.contains("obs-fold") == true)
        let lenient = parseRequests(input, options: Self.lenient)
        #expect(lenient.error == nil)
        #expect(lenient.events.first == .head(requestHead("GET", "/", [("X-Long", "first second third"), ("Host", "h")])))
    }

    @Test func obsFoldInTrailers() {
        let input = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: a\r\n b\r\n\r\n"
        #expect(parseRequests(input).error?.offset == offset(of: " b\r\n", in: input))
        #expect(parseRequests(input, options: Self.lenient).events.last == .end(trailers: [HeaderField(name: "X", value: "a b")]))
    }

    // MARK: - Repeated Content-Length

    @Test(arguments: [
        "Content-Length: 3\r\nContent-Length: 3\r\n",
        "Content-Length: 3, 3\r\n",
        "Content-Length: 3,3,\r\n",
    ])
    func repeatedEqualContentLength(fields: String) {
        let input = "POST / HTTP/1.1\r\n\(fields)\r\nabc"
        let strict = parseRequests(input)
        #expect(strict.error?.kind == .malformed)
        #expect(strict.events.isEmpty)
        let lenient = parseRequests(input, options: Self.lenient)
        #expect(lenient.error == nil)
        #expect(lenient.events.count == 3)
        #expect(lenient.events[1] == .body(Array("abc".utf8)))
    }

    @Test(arguments: ["Content-Length: 3\r\nContent-Length: 4\r\n", "Content-Length: 3, 4\r\n"])
    func differingContentLengthsAreRefusedEitherWay(fields: String) {
        let input = "POST / HTTP/1.1\r\n\(fields)\r\nabcd"
        for options in [RequestParser.Options(), Self.lenient] {
            let result = parseRequests(input, options: options)
            #expect(result.error?.kind == .malformed)
            #expect(result.events.isEmpty)
        }
    }

    // MARK: - Limits

    @Test func headLimitCountsTheRequestLineAndIsExact() {
        let input = "GET /abc HTTP/1.1\r\nHost: h\r\n\r\n"
        let size = input.utf8.count
        #expect(parseRequests(input, options: .init(maxHeaderBytes: size)).error == nil)
        let over = parseRequests(input, options: .init(maxHeaderBytes: size - 1))
        #expect(over.error?.kind == .headersTooLarge)
        #expect(over.error?.offset == size - 1)
        // Within the request line too.
        let inLine = parseRequests(input, options: .init(maxHeaderBytes: 5))
        #expect(inLine.error?.kind == .headersTooLarge)
        #expect(inLine.error?.offset == 5)
        // Empty lines before a request count towards its head.
        let leading = parseRequests("\r\n" + input, options: .init(maxHeaderBytes: size))
        #expect(leading.error?.kind == .headersTooLarge)
        #expect(leading.error?.offset == size)
    }

    @Test func headLimitAppliesToEachRequestOnItsOwn() {
        let one = "GET / HTTP/1.1\r\nHost: h\r\n\r\n"
        let result = parseRequests(String(repeating: one, count: 5), options: .init(maxHeaderBytes: one.utf8.count))
        #expect(result.error == nil)
        #expect(result.events.count == 10)
    }

    @Test func trailerSectionLimit() {
        // A trailer section longer than the head (49 bytes), so only the trailers hit the limit.
        let trailer = "X-Trailer: " + String(repeating: "t", count: 60) + "\r\n\r\n"
        let input = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n" + trailer
        let trailerSize = trailer.utf8.count
        #expect(parseRequests(input, options: .init(maxHeaderBytes: trailerSize)).error == nil)
        let over = parseRequests(input, options: .init(maxHeaderBytes: trailerSize - 1))
        #expect(over.error?.kind == .headersTooLarge)
        #expect(over.error?.offset == input.utf8.count - 1)
    }

    @Test func targetLimit() {
        let input = "GET /0123456789 HTTP/1.1\r\n\r\n"
        #expect(parseRequests(input, options: .init(maxTargetBytes: 11)).error == nil)
        let over = parseRequests(input, options: .init(maxTargetBytes: 10))
        #expect(over.error?.kind == .targetTooLong)
        #expect(over.error?.offset == offset(of: "9 HTTP", in: input))
    }

    @Test func bodyLimitByContentLength() {
        let input = "POST / HTTP/1.1\r\nContent-Length: 6\r\n\r\nabcdef"
        #expect(parseRequests(input, options: .init(maxBodyBytes: 6)).error == nil)
        let over = parseRequests(input, options: .init(maxBodyBytes: 5))
        #expect(over.error?.kind == .bodyTooLarge)
        #expect(over.error?.offset == offset(of: "abcdef", in: input))
        // The head was fine and is delivered before the refusal.
        #expect(over.events == [.head(requestHead("POST", "/", [("Content-Length", "6")], framing: .contentLength(6)))])
    }

    @Test func bodyLimitOnAChunkedBodyDeliversWhatFits() {
        let input = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nabcd\r\n4\r\nefgh\r\n0\r\n\r\n"
        #expect(parseRequests(input, options: .init(maxBodyBytes: 8)).error == nil)
        let over = parseRequests(input, options: .init(maxBodyBytes: 6))
        #expect(over.error?.kind == .bodyTooLarge)
        #expect(over.error?.offset == offset(of: "gh\r\n", in: input))
        #expect(over.events.last == .body(Array("abcdef".utf8)))
    }
}
