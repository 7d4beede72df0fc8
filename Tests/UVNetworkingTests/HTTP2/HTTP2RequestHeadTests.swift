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
