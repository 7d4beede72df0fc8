import Testing
import UVHTTP1

/// Each option of `ResponseParser.Options`, both ways; the default is strict.
@Suite(.tags(.unit)) struct ResponseParserOptionsTests {
    @Test func theDefaultIsStrict() {
        let options = ResponseParser.Options()
        #expect(!options.allowsBareLF && !options.allowsObsFold && !options.allowsRepeatedContentLength)
        #expect(options.maxHeaderBytes == 64 * 1024)
        #expect(options.maxBodyBytes == nil)
    }

    @Test(arguments: [
        // The status line, a field line, the final empty line.
        "HTTP/1.1 200 OK\nContent-Length: 2\r\n\r\nhi",
        "HTTP/1.1 200 OK\r\nContent-Length: 2\n\r\nhi",
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\nhi",
        // Chunk-size line, after chunk data, the last chunk, the trailers.
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\nhi\r\n0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\n0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\nX: y\n\r\n",
    ])
    func bareLF(input: String) {
        let strict = parsePublicly(input)
        #expect(strict.error?.kind == .malformed)
        #expect(strict.error?.reason.contains("bare LF") == true, "\(strict.error?.reason ?? "")")
        // The offset is the first bare LF's.
        let firstBareLF = Array(input.utf8).indices.first { index in
            Array(input.utf8)[index] == 0x0A && (index == 0 || Array(input.utf8)[index - 1] != 0x0D)
        }
        #expect(strict.error?.offset == firstBareLF)
        let lenient = parsePublicly(input, options: .init(allowsBareLF: true))
        #expect(lenient.error == nil)
        #expect(lenient.events.contains(.body(Array("hi".utf8))))
    }

    @Test func aBareCRIsRefusedEitherWay() {
        for options in [ResponseParser.Options(), ResponseParser.Options(allowsBareLF: true)] {
            #expect(parsePublicly("HTTP/1.1 200 OK\r\nA: b\rc\r\nContent-Length: 0\r\n\r\n", options: options).error?.kind == .malformed)
        }
    }

    @Test func obsFold() throws {
        let input = "HTTP/1.1 200 OK\r\nX-A: one\r\n  two \r\n\tthree\r\nContent-Length: 0\r\n\r\n"
        let strict = parsePublicly(input)
        #expect(strict.error?.kind == .malformed)
        #expect(strict.error?.offset == 27)
        let lenient = parsePublicly(input, options: .init(allowsObsFold: true))
        #expect(lenient.error == nil)
        guard case .head(let head)? = lenient.events.first else { Issue.record("no head"); return }
        // RFC 9112 §5.2: each fold becomes one SP.
        #expect(Array(head.fields) == [HeaderField(name: "X-A", value: "one two three"), HeaderField(name: "Content-Length", value: "0")])
    }

    @Test(arguments: [
        "Content-Length: 2\r\nContent-Length: 2\r\n",
        "Content-Length: 2, 2\r\n",
        "Content-Length: 2,2\r\nContent-Length: 2\r\n",
    ])
    func repeatedContentLength(fields: String) {
        let input = "HTTP/1.1 200 OK\r\n" + fields + "\r\nhi"
        let strict = parsePublicly(input)
        #expect(strict.error?.kind == .malformed)
        #expect(strict.error?.reason.contains("Content-Length") == true)
        let lenient = parsePublicly(input, options: .init(allowsRepeatedContentLength: true))
        #expect(lenient.error == nil)
        #expect(lenient.events.contains(.body(Array("hi".utf8))))
    }

    @Test(arguments: ["Content-Length: 2\r\nContent-Length: 3\r\n", "Content-Length: 2, 3\r\n"])
    func differingContentLengthsAreRefusedEitherWay(fields: String) {
        for lenient in [false, true] {
            let result = parsePublicly("HTTP/1.1 200 OK\r\n" + fields + "\r\nhi", options: .init(allowsRepeatedContentLength: lenient))
            #expect(result.error?.kind == .malformed)
        }
    }

    @Test func headLimitBothWays() {
        let input = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
        let size = input.utf8.count
        #expect(parsePublicly(input, options: .init(maxHeaderBytes: size)).error == nil)
        let over = parsePublicly(input, options: .init(maxHeaderBytes: size - 1)).error
        #expect(over?.kind == .headersTooLarge)
        #expect(over?.offset == size - 1)
    }

    @Test func bodyLimitBothWays() {
        let chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"
        #expect(parsePublicly(chunked, options: .init(maxBodyBytes: 5)).error == nil)
        let over = parsePublicly(chunked, options: .init(maxBodyBytes: 4))
        #expect(over.error?.kind == .bodyTooLarge)
        // What fits is delivered before the error.
        #expect(over.events.contains(.body(Array("abcd".utf8))))
        let announced = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nabcde"
        #expect(parsePublicly(announced, options: .init(maxBodyBytes: 5)).error == nil)
        #expect(parsePublicly(announced, options: .init(maxBodyBytes: 4)).error?.kind == .bodyTooLarge)
    }
}
