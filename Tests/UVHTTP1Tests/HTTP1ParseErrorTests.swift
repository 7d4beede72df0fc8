import Testing
import UVHTTP1

/// `HTTP1ParseError.offset`: where in the stream the problem was found, the same however the
/// stream was split into feeds.
@Suite(.tags(.unit)) struct HTTP1ParseErrorTests {
    static let head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    static let plain = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"

    /// (input, options, expected kind, expected offset).
    static let cases: [(String, ResponseParser.Options, HTTP1ParseError.Kind, Int)] = [
        // A status code of four digits: at its fourth digit.
        ("HTTP/1.1 2000 OK\r\n\r\n", .init(), .malformed, 12),
        // llhttp's own refusal: the space inside a field name.
        ("HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n", .init(), .malformed, 20),
        // A bare CR inside a value: at the byte after it.
        ("HTTP/1.1 200 OK\r\nA: b\rc\r\n\r\n", .init(), .malformed, 22),
        // A bare LF, refused by default: at the LF.
        ("HTTP/1.1 200 OK\nContent-Length: 0\r\n\r\n", .init(), .malformed, 15),
        // A chunk size that is not hex: at its first byte.
        (head + "zz\r\n", .init(), .malformed, head.utf8.count),
        // A body over its limit: at its first byte past the limit.
        (head + "5\r\nhello\r\n0\r\n\r\n", .init(maxBodyBytes: 3), .bodyTooLarge, head.utf8.count + 3 + 3),
        // A head over its limit: at its first byte past the limit.
        ("HTTP/1.1 200 OK\r\nA: bcdefgh\r\n\r\n", .init(maxHeaderBytes: 20), .headersTooLarge, 20),
        // The end of the stream inside a body: the stream's length.
        ("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhel", .init(), .truncatedBody, 41),
        // A problem in the second response of a stream counts the first one's bytes.
        (plain + "HTTP/1.1 2000 OK\r\n\r\n", .init(), .malformed, plain.utf8.count + 12),
        (plain + plain + "HTTP/1.1 200 OK\nA: b\r\n\r\n", .init(), .malformed, 2 * plain.utf8.count + 15),
    ]

    @Test(arguments: cases.indices)
    func offsetIsWhereTheProblemIsWhateverTheSplit(index: Int) {
        let (text, options, kind, offset) = Self.cases[index]
        let input = Array(text.utf8)
        let whole = parsePublicly(input, options: options)
        #expect(whole.error?.kind == kind, "\(text.debugDescription)")
        #expect(whole.error?.offset == offset, "\(text.debugDescription)")
        // Byte by byte, and cut in two at every place.
        let bytewise = parsePublicly(input, options: options, cuts: Array(1..<input.count))
        #expect(bytewise.error == whole.error)
        #expect(bytewise.events == whole.events)
        for cut in 1..<input.count {
            let split = parsePublicly(input, options: options, cuts: [cut])
            #expect(split.error == whole.error, "cut at \(cut)")
            #expect(split.events == whole.events, "cut at \(cut)")
        }
    }

    /// Errors found when the head is complete (framing, upgrades, a Content-Length over the
    /// limit) lie at the first byte after the head (where its body would start), whatever the split.
    @Test(arguments: [
        ("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", ResponseParser.Options(), HTTP1ParseError.Kind.malformed),
        ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: upgrade\r\n\r\n", ResponseParser.Options(), .upgradeRefused),
        ("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n", ResponseParser.Options(maxBodyBytes: 5), .bodyTooLarge),
    ])
    func headCompleteErrorsLieAtTheHeadsEnd(text: String, options: ResponseParser.Options, kind: HTTP1ParseError.Kind) {
        let input = Array(text.utf8)
        let whole = parsePublicly(input, options: options)
        #expect(whole.error?.kind == kind)
        #expect(whole.error?.offset == input.count)
        for cut in 1..<input.count {
            #expect(parsePublicly(input, options: options, cuts: [cut]).error == whole.error, "cut at \(cut)")
        }
    }

    @Test func aDeadParserThrowsTheSameErrorAgain() throws {
        let parser = ResponseParser()
        let first = #expect(throws: HTTP1ParseError.self) { _ = try parser.feed(Array("HTTP/1.1 2000 OK\r\n".utf8)) }
        let again = #expect(throws: HTTP1ParseError.self) { _ = try parser.feed(Array("HTTP/1.1 200 OK\r\n".utf8)) }
        #expect(first == again)
        #expect(try #require(first).offset == 12)
        #expect(#expect(throws: HTTP1ParseError.self) { _ = try parser.finish() } == first)
    }
}
