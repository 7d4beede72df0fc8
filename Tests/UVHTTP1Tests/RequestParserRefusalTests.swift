import Testing

@testable import UVHTTP1

/// What the request parser refuses whatever its options (request smuggling shapes, RFC 9112 §6.1
/// and §6.3, and syntax), each at its byte offset.
@Suite(.tags(.unit)) struct RequestParserRefusalTests {
    static let lenient = RequestParser.Options(allowsBareLF: true, allowsObsFold: true, allowsRepeatedContentLength: true)

    /// A refusal: the input, and where the error must point (the marker's offset plus `plus`).
    struct Refusal: Sendable, CustomTestStringConvertible {
        var input: String
        var marker: String
        var plus = 0
        var testDescription: String { input.debugDescription }
    }

    static let refusals: [Refusal] = [
        // Framing (RFC 9112 §6.1, §6.3): at the head's end, or at the offending field line.
        Refusal(input: "POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", marker: "\r\n\r\n0", plus: 4),
        Refusal(input: "POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\nabc", marker: "\r\n\r\nabc", plus: 4),
        Refusal(input: "POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", marker: "\r\n\r\n0", plus: 4),
        // llhttp refuses a repeated chunked itself, at its value.
        Refusal(input: "POST / HTTP/1.1\r\nTransfer-Encoding: chunked, chunked\r\n\r\n0\r\n\r\n", marker: ", chunked", plus: 1),
        Refusal(input: "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", marker: "chunked\r\n\r\n", plus: 1),
        Refusal(input: "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", marker: "\r\n\r\n0", plus: 4),
        Refusal(input: "POST / HTTP/1.1\r\nContent-Length: abc\r\n\r\n", marker: "Content-Length"),
        Refusal(input: "POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", marker: "Content-Length"),
        Refusal(input: "POST / HTTP/1.1\r\nContent-Length: +1\r\n\r\nx", marker: "Content-Length"),
        Refusal(input: "POST / HTTP/1.1\r\nContent-Length: 1 2\r\n\r\nx", marker: "Content-Length"),
        Refusal(input: "POST / HTTP/1.1\r\nContent-Length:\r\n\r\n", marker: "Content-Length"),
        Refusal(input: "POST / HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n", marker: "Content-Length"),
        // Syntax: the byte itself.
        Refusal(input: "GET / HTTP/1.1\r\nHost : h\r\n\r\n", marker: " : h"),
        Refusal(input: "GET / HTTP/1.1\r\nHost\t: h\r\n\r\n", marker: "\t: h"),
        Refusal(input: "GET / HTTP/1.1\r\nHost: a\rb\r\n\r\n", marker: "b\r\n"),
        Refusal(input: "GET / HTTP/1.1\rX\n\r\n", marker: "X\n"),
        Refusal(input: "\rGET / HTTP/1.1\r\n\r\n", marker: "GET"),
        Refusal(input: "GET / HTTP/1.1\r\n: empty name\r\n\r\n", marker: ": empty"),
        Refusal(input: "GET / HTTP/2.0\r\n\r\n", marker: "HTTP/2.0"),
        Refusal(input: "GET /\r\n\r\n", marker: "\r\n"),
        Refusal(input: "GET  / HTTP/1.1\r\n\r\n", marker: " / HTTP"),  // the second space
        Refusal(input: "GET / HTTP/1.1 \r\n\r\n", marker: " \r\n", plus: 0),
        // llhttp knows methods by their spelling: no method starts with "BR".
        Refusal(input: "BREW / HTTP/1.1\r\n\r\n", marker: "REW"),
        Refusal(input: "GET /a b HTTP/1.1\r\n\r\n", marker: "b HTTP"),
    ]

    @Test(arguments: refusals)
    func refusedWhateverTheOptions(refusal: Refusal) {
        let expected = offset(of: refusal.marker, in: refusal.input, plus: refusal.plus)
        for options in [RequestParser.Options(), Self.lenient] {
            let result = parseRequests(refusal.input, options: options)
            #expect(result.error?.kind == .malformed, "\(result.error.map(String.init(describing:)) ?? "no error")")
            #expect(result.error?.offset == expected, "\(result.error.map(String.init(describing:)) ?? "no error")")
            // Nothing of a refused request's body is delivered.
            #expect(!result.events.contains { if case .body = $0 { true } else { false } })
        }
    }

    /// The first problem in the stream wins, whichever check finds it: an llhttp refusal before
    /// a scanner's, and a scanner's before llhttp's.
    @Test func theFirstProblemWins() {
        let llhttpFirst = "GET / HTTP/1.1\r\nBad\u{1}Name: x\r\nX: a\rb\r\n\r\n"
        #expect(parseRequests(llhttpFirst).error?.offset == offset(of: "\u{1}", in: llhttpFirst))
        let scannerFirst = "GET / HTTP/1.1\r\nX: a\rb\r\nBad\u{1}Name: x\r\n\r\n"
        #expect(parseRequests(scannerFirst).error?.offset == offset(of: "b\r\n", in: scannerFirst))
    }

    /// A refusal in a later pipelined request comes after the earlier requests' events, and its
    /// offset counts from the start of the stream.
    @Test func refusalInAPipelinedRequestCountsFromTheStreamStart() {
        let first = "GET /1 HTTP/1.1\r\n\r\n"
        let input = first + "GET /2 HTTP/1.1\r\nContent-Length: x\r\n\r\n"
        let result = parseRequests(input)
        #expect(result.events == [.head(requestHead("GET", "/1")), .end(trailers: [])])
        #expect(result.error?.offset == offset(of: "Content-Length", in: input))
    }
}
