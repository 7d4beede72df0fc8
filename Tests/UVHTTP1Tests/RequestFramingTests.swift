import Testing
@testable import UVHTTP1

/// The framing decision, without sockets: what each body and caller field gives.
@Suite(.tags(.unit)) struct RequestFramingTests {
    private func decide(_ body: RequestFraming.Body, _ fields: [(name: String, value: String)] = [],
                        method: String = "POST") throws(RequestFraming.Conflict) -> RequestFraming {
        try RequestFraming.decide(method: method, body: body, fields: fields)
    }

    @Test func withoutCallerFieldsTheBodyDecides() throws {
        #expect(try decide(.none, method: "GET") == .none)
        #expect(try decide(.data(0), method: "DELETE") == .none)
        #expect(try decide(.none, method: "POST") == .contentLength(0))
        #expect(try decide(.data(0), method: "PATCH") == .contentLength(0))
        #expect(try decide(.data(3), method: "GET") == .contentLength(3))
        #expect(try decide(.data(3), method: "HEAD") == .contentLength(3))
        #expect(try decide(.stream(length: 1 << 40), method: "PUT") == .contentLength(1 << 40))
        #expect(try decide(.stream(length: 0), method: "GET") == .contentLength(0))
        #expect(try decide(.stream(length: nil), method: "PUT") == .chunked)
    }

    @Test func aCallersLengthThatAgreesIsKept() throws {
        #expect(try decide(.data(5), [("Content-Length", "5")]) == .contentLength(5))
        #expect(try decide(.data(5), [("content-length", " 5\t")]) == .contentLength(5))
        #expect(try decide(.data(5), [("Content-Length", "5, 5"), ("CONTENT-LENGTH", "5")]) == .contentLength(5))
        #expect(try decide(.none, [("Content-Length", "0")], method: "GET") == .contentLength(0))
        #expect(try decide(.stream(length: 7), [("Content-Length", "7")]) == .contentLength(7))
        #expect(try decide(.stream(length: nil), [("Content-Length", "7")]) == .contentLength(7), "adopted")
        #expect(try decide(.data(0), [("Content-Length", "000")]) == .contentLength(0))
    }

    @Test(arguments: [
        (RequestFraming.Body.none, "1"), (.data(5), "3"), (.data(5), "6"), (.stream(length: 5), "4"),
        (.data(5), "5, 6"), (.data(5), "+5"), (.data(5), "-5"), (.data(5), "5x"), (.data(5), ""), (.data(5), "0x5"),
        (.data(5), "99999999999999999999"), (.stream(length: nil), "1e3"),
    ])
    func aCallersLengthThatDisagreesIsRefused(body: RequestFraming.Body, value: String) {
        #expect(throws: RequestFraming.Conflict.self) { try decide(body, [("Content-Length", value)]) }
    }

    @Test func chunkedFromTheCallerChunksAnyBody() throws {
        #expect(try decide(.data(5), [("Transfer-Encoding", "chunked")]) == .chunked)
        #expect(try decide(.data(5), [("transfer-encoding", " Chunked ")]) == .chunked)
        #expect(try decide(.none, [("Transfer-Encoding", "chunked")], method: "GET") == .chunked)
        #expect(try decide(.stream(length: 9), [("Transfer-Encoding", "chunked")]) == .chunked)
        #expect(try decide(.stream(length: nil), [("Transfer-Encoding", "chunked,")]) == .chunked)
    }

    @Test(arguments: [
        [("Transfer-Encoding", "gzip")], [("Transfer-Encoding", "gzip, chunked")], [("Transfer-Encoding", "identity")],
        [("Transfer-Encoding", "")], [("Transfer-Encoding", "chunked"), ("Transfer-Encoding", "chunked")],
        [("Transfer-Encoding", "chunked, chunked")], [("Transfer-Encoding", "chunked"), ("Content-Length", "5")],
        // The Kelvin sign (U+212A) is a "k" only under Unicode case mapping (found by the
        // request-encoding harness).
        [("Transfer-Encoding", "chun\u{212A}ed")],
    ])
    func otherTransferCodingsAndMixedFramingAreRefused(fields: [(String, String)]) {
        #expect(throws: RequestFraming.Conflict.self) { try decide(.data(5), fields.map { (name: $0.0, value: $0.1) }) }
    }

    @Test func otherFieldsAreIgnored() throws {
        #expect(try decide(.data(2), [("Content-Type", "5"), ("Content-Length-X", "9"), ("X-Transfer-Encoding", "gzip")])
                == .contentLength(2))
        #expect(RequestFraming.isFramingField("CONTENT-length"))
        #expect(RequestFraming.isFramingField("transfer-encoding"))
        #expect(!RequestFraming.isFramingField("Content-Type"))
    }
}
