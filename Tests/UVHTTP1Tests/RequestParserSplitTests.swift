import Testing

@testable import UVHTTP1

/// The request parser's output does not depend on how the stream is split into feeds: for every
/// cut of small inputs into two feeds, and for byte-by-byte feeding, events (bodies merged),
/// error and offset, and consumed bytes equal those of one feed.
@Suite(.tags(.unit)) struct RequestParserSplitTests {
    static let inputs: [String] = [
        "GET / HTTP/1.1\r\nHost: h\r\n\r\n",
        "\r\nGET /a HTTP/1.1\r\n\r\nPOST /b HTTP/1.1\r\nContent-Length: 3\r\n\r\nabcGET /c HTTP/1.1\r\n\r\n",
        "PUT /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5;e=1\r\nhello\r\n1\r\n!\r\n0\r\nX-T: v\r\n\r\nGET / HTTP/1.0\r\n\r\nGET /never HTTP/1.1\r\n\r\n",
        "GET /\nHTTP/1.1\r\n\r\n",
        "GET / HTTP/1.1\nX: a\r\n b\nY: 1\n\nPOST / HTTP/1.1\r\nTransfer-Encoding: chunked\n\n2\nab\n0\n\n",
        "POST / HTTP/1.1\r\nContent-Length: 2, 2\r\nContent-Length: 2\r\n\r\nok",
        "POST / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        "GET / HTTP/1.1\r\nHost : h\r\n\r\n",
        "GET / HTTP/1.1\r\nX: a\rb\r\n\r\n",
        "GET /0123456789abcdef HTTP/1.1\r\nHost: h\r\nX: 0123456789abcdef\r\n\r\n",
        "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n8\r\n01234567\r\n8\r\n89abcdef\r\n0\r\n\r\n",
        "GET /chat HTTP/1.1\r\nConnection: upgrade\r\nUpgrade: x\r\n\r\nnot http",
        "POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc",
        // llhttp reports this error at the byte after the space: its offset once depended on the
        // split (Fuzz/regressions/request-parser/llhttp-error-offset-clamped-per-piece).
        "POST / HTTP/1.1\r\n HTTP/1.0\r\nX: y\r\n\r\n",
    ]

    static let optionSets: [RequestParser.Options] = [
        .init(),
        .init(allowsBareLF: true, allowsObsFold: true, allowsRepeatedContentLength: true),
        .init(maxHeaderBytes: 40, maxTargetBytes: 8, maxBodyBytes: 9),
    ]

    @Test(arguments: inputs)
    func everySplitGivesTheSameResult(input: String) {
        let bytes = Array(input.utf8)
        for options in Self.optionSets {
            let whole = parseRequests(bytes, options: options)
            for cut in 1..<bytes.count {
                let split = parseRequests(bytes, options: options, cuts: [cut])
                #expect(split.events == whole.events, "cut at \(cut)")
                #expect(split.error == whole.error, "cut at \(cut)")
                // A feed that throws returns no count: compare counts of clean runs only.
                if whole.error == nil { #expect(split.consumed == whole.consumed, "cut at \(cut)") }
            }
            let byteByByte = parseRequests(bytes, options: options, cuts: Array(1..<bytes.count))
            #expect(byteByByte.events == whole.events)
            #expect(byteByByte.error == whole.error)
            if whole.error == nil { #expect(byteByByte.consumed == whole.consumed) }
        }
    }
}
