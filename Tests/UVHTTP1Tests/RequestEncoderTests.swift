import Testing
@testable import UVHTTP1

@Suite(.tags(.unit)) struct RequestEncoderTests {
    /// "http://authority/target" split into the request target and the Host value (the URL
    /// parsing itself is the client's, `RequestTarget`).
    private func split(_ url: String) -> (path: String, authority: String) {
        let rest = url.dropFirst("http://".count)
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        return (rest[slash...].isEmpty ? "/" : String(rest[slash...]), String(rest[..<slash]))
    }

    private func encode(_ method: String = "GET", _ url: String = "http://example.com/a?b=c",
                        _ fields: [(name: String, value: String)] = [], body: [UInt8]? = nil) throws -> String {
        let target = split(url)
        let framing = try RequestFraming.decide(method: method, body: body.map { .data($0.count) } ?? .none, fields: fields)
        let bytes: [UInt8]
        if let body {
            bytes = try body.withUnsafeBytes {
                try RequestEncoder.encode(method: method, target: target.path, authority: target.authority, fields: fields, framing: framing, body: $0)
            }
        } else {
            bytes = try RequestEncoder.encode(method: method, target: target.path, authority: target.authority, fields: fields, framing: framing, body: nil)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func getHasHostAndNoContentLength() throws {
        #expect(try encode() == "GET /a?b=c HTTP/1.1\r\nHost: example.com\r\n\r\n")
    }

    @Test func postWithBodyHasContentLengthAndBodyInTheSameBuffer() throws {
        #expect(try encode("POST", "http://127.0.0.1:8080/x", [("Content-Type", "text/plain")], body: Array("hi".utf8))
                == "POST /x HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nhi")
    }

    @Test func emptyPostSaysContentLengthZero() throws {
        #expect(try encode("POST", "http://h/") == "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n")
    }

    @Test func theCallersFramingFieldsAreReplacedByTheEncodersOwn() throws {
        #expect(try encode("POST", "http://h/", [("content-length", "2"), ("X", "y")], body: Array("hi".utf8))
                == "POST / HTTP/1.1\r\nHost: h\r\nX: y\r\nContent-Length: 2\r\n\r\nhi")
        #expect(try encode("POST", "http://h/", [("Transfer-Encoding", " chunked ")], body: Array("hello, world".utf8))
                == "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nc\r\nhello, world\r\n0\r\n\r\n")
        let target = split("http://h/")
        let empty = try RequestEncoder.encode(method: "GET", target: target.path, authority: target.authority, fields: [("Transfer-Encoding", "chunked")],
                                              framing: .chunked, body: UnsafeRawBufferPointer(start: nil, count: 0))
        #expect(String(decoding: empty, as: UTF8.self) == "GET / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
    }

    @Test func sessionDefaultsNeverFrame() throws {
        let bytes = try RequestEncoder.encode(method: "GET", target: "/", authority: "h", fields: [],
                                              defaults: [("Content-Length", "9"), ("Transfer-Encoding", "chunked"), ("A", "b")],
                                              framing: .none, body: nil)
        #expect(String(decoding: bytes, as: UTF8.self) == "GET / HTTP/1.1\r\nHost: h\r\nA: b\r\n\r\n")
    }

    @Test func sessionDefaultsEncodedOnceGoWholeOrOneByOne() throws {
        let defaults = EncodedFields([("Accept-Encoding", "gzip, deflate"), ("X-Session", "1")])
        #expect(defaults.isPlain)
        #expect(String(decoding: defaults.bytes, as: UTF8.self) == "Accept-Encoding: gzip, deflate\r\nX-Session: 1\r\n")
        let target = split("http://h/")
        func head(_ fields: [(name: String, value: String)]) throws -> String {
            String(decoding: try RequestEncoder.encode(method: "GET", target: target.path, authority: target.authority, fields: fields, defaults: defaults,
                                                       framing: .none, body: nil), as: UTF8.self)
        }
        // Whole, after the caller's fields; one by one when the caller names one of them.
        #expect(try head([]) == "GET / HTTP/1.1\r\nHost: h\r\nAccept-Encoding: gzip, deflate\r\nX-Session: 1\r\n\r\n")
        #expect(try head([("A", "b")]) == "GET / HTTP/1.1\r\nHost: h\r\nA: b\r\nAccept-Encoding: gzip, deflate\r\nX-Session: 1\r\n\r\n")
        #expect(try head([("x-session", "2")]) == "GET / HTTP/1.1\r\nHost: h\r\nx-session: 2\r\nAccept-Encoding: gzip, deflate\r\n\r\n")
    }

    @Test func aBadSessionDefaultFailsOnlyTheRequestsThatWouldSendIt() throws {
        let defaults = EncodedFields([("X-Bad", "a\r\nInjected: 1"), ("A", "b")])
        #expect(!defaults.isPlain)
        let target = split("http://h/")
        #expect(throws: RequestEncoder.EncodeError.invalidValue(name: "X-Bad")) {
            _ = try RequestEncoder.encode(method: "GET", target: target.path, authority: target.authority, fields: [], defaults: defaults, framing: .none, body: nil)
        }
        let overridden = try RequestEncoder.encode(method: "GET", target: target.path, authority: target.authority, fields: [("x-bad", "fine")], defaults: defaults,
                                                   framing: .none, body: nil)
        #expect(String(decoding: overridden, as: UTF8.self) == "GET / HTTP/1.1\r\nHost: h\r\nx-bad: fine\r\nA: b\r\n\r\n")
    }

    @Test func callerHostWins() throws {
        #expect(try encode("GET", "http://h/", [("host", "other")]) == "GET / HTTP/1.1\r\nhost: other\r\n\r\n")
    }

    /// RFC 9112 §3.2: a server answers two Host fields with 400; the request is refused before
    /// it is sent instead, equal values included (found by the request-encoding harness).
    @Test(arguments: [[("Host", "a"), ("host", "b")], [("HOST", "a"), ("X", "y"), ("Host", "a")]])
    func twoCallerHostsAreRefused(fields: [(String, String)]) {
        #expect(throws: RequestEncoder.EncodeError.repeatedHost) {
            _ = try encode("GET", "http://h/", fields.map { (name: $0.0, value: $0.1) })
        }
    }

    @Test(arguments: ["a\r\nInjected: 1", "a\nb", "a\rb", "a\u{0}b", "a\u{7F}b", "a\u{1}b"])
    func valuesWithControlBytesAreRejected(value: String) {
        #expect(throws: RequestEncoder.EncodeError.invalidValue(name: "X")) {
            _ = try encode("GET", "http://h/", [("X", value)])
        }
    }

    @Test(arguments: ["", "Bad Name", "Bad:Name", "Bad\r\nName", "Ünï"])
    func namesThatAreNotTokensAreRejected(name: String) {
        #expect(throws: RequestEncoder.EncodeError.invalidName(name)) {
            _ = try encode("GET", "http://h/", [(name, "v")])
        }
    }

    @Test func tabsAndObsTextAreFineInValues() throws {
        #expect(try encode("GET", "http://h/", [("X", "a\tb é")]).contains("X: a\tb é\r\n"))
    }

    @Test func badMethodIsRejected() {
        #expect(throws: RequestEncoder.EncodeError.invalidMethod("GE T")) { _ = try encode("GE T") }
    }
}
