import Testing
@testable import UVNetworking

/// Requests prepared in HTTP/1.1 form, translated into HTTP/2 header blocks.
@Suite(.tags(.unit)) struct HTTP2RequestHeadTests {
    @Test func pseudoFieldsComeFirstAndConnectionFieldsGo() throws {
        let request = Array("POST /upload?x=1 HTTP/1.1\r\nHost: a.test:8443\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\nKeep-Alive: 5\r\nUpgrade: h2c\r\nTE: gzip\r\nX-Custom:  spaced value \r\nContent-Type: text/plain\r\n\r\nbody".utf8)
        let translated = try HTTP2RequestHead.translate(request, scheme: "https")
        #expect(translated.fields.map { "\($0.name): \($0.value)" } == [
            ":method: POST", ":scheme: https", ":authority: a.test:8443", ":path: /upload?x=1",
            "x-custom: spaced value", "content-type: text/plain",
        ])
        #expect(Array(request[translated.bodyStart...]) == Array("body".utf8))
    }

    @Test func teTrailersIsKept() throws {
        let translated = try HTTP2RequestHead.translate(Array("GET / HTTP/1.1\r\nHost: a\r\nTE: trailers\r\n\r\n".utf8), scheme: "http")
        #expect(translated.fields.contains { $0.name == "te" && $0.value == "trailers" })
    }

    @Test func aHeadWithoutHostOrEndIsRefused() {
        #expect(throws: HTTP2Error.self) { try HTTP2RequestHead.translate(Array("GET / HTTP/1.1\r\nX: y\r\n\r\n".utf8), scheme: "http") }
        #expect(throws: HTTP2Error.self) { try HTTP2RequestHead.translate(Array("GET / HTTP/1.1\r\nHost: a\r\n".utf8), scheme: "http") }
    }
}

extension HTTP2RequestHeadTests {
    @Test func connectCarriesOnlyMethodAndAuthority() throws {
        let translated = try HTTP2RequestHead.translate(Array("CONNECT origin.test:443 HTTP/1.1\r\nHost: origin.test:443\r\nProxy-Authorization: Basic eA==\r\n\r\n".utf8), scheme: "http")
        #expect(translated.fields.map { "\($0.name): \($0.value)" } == [
            ":method: CONNECT", ":authority: origin.test:443", "proxy-authorization: Basic eA==",
        ])
    }

    /// Names are lowercased byte by byte; values keep their bytes, obs-text included.
    @Test func namesAreLoweredAndValuesKeptAsBytes() throws {
        var request = Array("GET /a%20b HTTP/1.1\r\nHOST:\tx.test\t\r\nX-MiXeD-Case: V\u{00E9}\r\n".utf8)
        request += [0x58, 0x2D, 0x42, 0x3A, 0x20, 0xFF, 0x0D, 0x0A, 0x0D, 0x0A]
        let block = HTTP2HeaderBlock()
        let bodyStart = try HTTP2RequestHead.translate(request, scheme: "https", into: block)
        #expect(bodyStart == request.count)
        let fields = block.fields
        #expect(fields.map(\.name) == [":method", ":scheme", ":authority", ":path", "x-mixed-case", "x-b"])
        #expect(fields[2].value == "x.test")
        #expect(fields[3].value == "/a%20b")
        #expect(fields[4].value == "V\u{00E9}")
        let received = block.receivedFields
        received.withField(at: 5) { _, value in #expect(Array(value) == [0xFF]) }
    }

    @Test func aRequestLineWithoutThreePartsIsRefused() {
        #expect(throws: HTTP2Error.self) { try HTTP2RequestHead.translate(Array("GET /\r\nHost: a\r\n\r\n".utf8), scheme: "http") }
        #expect(throws: HTTP2Error.self) { try HTTP2RequestHead.translate(Array("GET / x HTTP/1.1\r\nHost: a\r\n\r\n".utf8), scheme: "http") }
        #expect(throws: HTTP2Error.self) { try HTTP2RequestHead.translate(Array("GET / HTTP/1.1\r\nHost a\r\n\r\n".utf8), scheme: "http") }
    }
}
