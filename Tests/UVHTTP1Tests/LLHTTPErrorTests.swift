import Testing
import UVHTTP1

/// llhttp's errno as a field of the parse errors, and their reasons in plain words: a field
/// value with a NUL, which llhttp refuses, in a response and in a request.
@Suite(.tags(.unit)) struct LLHTTPErrorTests {
    private func expectCodeApart(_ code: String?, reason: String) {
        #expect(code == "HPE_INVALID_HEADER_TOKEN")
        #expect(!reason.contains("HPE_") && reason.first?.isLowercase == true, "\(reason)")
    }

    @Test func aResponseErrorFoundByLLHTTPCarriesItsCodeApart() throws {
        let error = try #require(#expect(throws: HTTP1ParseError.self) {
            _ = try ResponseParser().feed(Array("HTTP/1.1 200 OK\r\nA: b\0c\r\nContent-Length: 0\r\n\r\n".utf8))
        })
        expectCodeApart(error.llhttpCode, reason: error.reason)
    }

    @Test func aRequestErrorFoundByLLHTTPCarriesItsCodeApart() throws {
        let error = try #require(#expect(throws: RequestParseError.self) {
            _ = try RequestParser().feed(Array("GET / HTTP/1.1\r\nHost: a\r\nA: b\0c\r\n\r\n".utf8))
        })
        expectCodeApart(error.llhttpCode, reason: error.reason)
    }
}
