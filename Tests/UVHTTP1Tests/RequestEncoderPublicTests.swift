import Testing
import UVHTTP1

/// RequestEncoder's public entry point: what it writes and what it refuses.
@Suite(.tags(.unit)) struct RequestEncoderPublicTests {
    private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test func writesHostFirstThenFieldsInOrderWithDuplicates() throws {
        let bytes = try RequestEncoder.encode(method: "GET", target: "/a?b=c", authority: "example.com:8080",
                                              fields: [HeaderField(name: "Accept", value: "*/*"), HeaderField(name: "accept", value: "text/html")])
        #expect(text(bytes) == "GET /a?b=c HTTP/1.1\r\nHost: example.com:8080\r\nAccept: */*\r\naccept: text/html\r\n\r\n")
    }

    @Test func withoutAnAuthorityTheFieldsMayCarryHost() throws {
        let bytes = try RequestEncoder.encode(method: "OPTIONS", target: "*", authority: nil, fields: [HeaderField(name: "Host", value: "h")])
        #expect(text(bytes) == "OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(text(try RequestEncoder.encode(method: "GET", target: "/", authority: "")) == "GET / HTTP/1.1\r\nHost: \r\n\r\n")
    }

    @Test func writesContentLengthBodies() throws {
        #expect(text(try RequestEncoder.encode(method: "POST", target: "/x", authority: "h", body: .contentLength(Array("hi".utf8))))
                == "POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\nhi")
        #expect(text(try RequestEncoder.encode(method: "POST", target: "/x", authority: "h", body: .contentLength([])))
                == "POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n")
    }

    @Test func writesChunkedBodiesWithTrailers() throws {
        let bytes = try RequestEncoder.encode(method: "PUT", target: "/up", authority: "h",
                                              body: .chunked([Array("abc".utf8), [], Array("0123456789abcdef!".utf8)],
                                                             trailers: [HeaderField(name: "X-Digest", value: "sha-256=x")]))
        #expect(text(bytes) == "PUT /up HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n11\r\n0123456789abcdef!\r\n0\r\nX-Digest: sha-256=x\r\n\r\n")
    }

    @Test(arguments: [
        ("", "/", "h", [HeaderField](), RequestEncoder.Body.none, HTTP1EncodeError.Kind.invalidMethod),
        ("GE T", "/", "h", [], .none, .invalidMethod),
        ("GET\r\n", "/", "h", [], .none, .invalidMethod),
        ("GET", "", "h", [], .none, .invalidTarget),
        ("GET", "/a b", "h", [], .none, .invalidTarget),
        ("GET", "/a\r\nX: y", "h", [], .none, .invalidTarget),
        ("GET", "/caf\u{E9}", "h", [], .none, .invalidTarget),
        ("GET", "/", "h h", [], .none, .invalidAuthority),
        ("GET", "/", "h\r\nX: 1", [], .none, .invalidAuthority),
        ("GET", "/", "h", [HeaderField(name: "X:Y", value: "v")], .none, .invalidFieldName),
        ("GET", "/", "h", [HeaderField(name: "X", value: "v\r\n\r\nGET /smuggled HTTP/1.1")], .none, .invalidFieldValue),
        ("GET", "/", "h", [HeaderField(name: "X", value: "v ")], .none, .invalidFieldValue),
        ("GET", "/", "h", [HeaderField(name: "Host", value: "other")], .none, .invalidFraming),
        ("POST", "/", "h", [HeaderField(name: "Content-Length", value: "5")], .contentLength([1]), .invalidFraming),
        ("POST", "/", "h", [HeaderField(name: "TRANSFER-ENCODING", value: "chunked")], .chunked([], trailers: []), .invalidFraming),
        ("POST", "/", "h", [], .chunked([[1]], trailers: [HeaderField(name: "Transfer-Encoding", value: "x")]), .invalidFraming),
        ("POST", "/", "h", [], .chunked([[1]], trailers: [HeaderField(name: "X y", value: "1")]), .invalidFieldName),
    ])
    func refuses(method: String, target: String, authority: String, fields: [HeaderField], body: RequestEncoder.Body,
                 kind: HTTP1EncodeError.Kind) {
        do {
            let bytes = try RequestEncoder.encode(method: method, target: target, authority: authority, fields: fields, body: body)
            Issue.record("encoded \(String(decoding: bytes, as: UTF8.self).debugDescription)")
        } catch {
            #expect(error.kind == kind, "\(error)")
        }
    }
}
