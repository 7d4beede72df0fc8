import Testing
import UVHTTP1

/// Encode, then parse: what RequestEncoder writes, RequestParser (strict defaults) reads back as
/// it was given, whole and one byte at a time, and several requests written back to back read
/// back as a pipeline.
@Suite(.tags(.unit)) struct RequestEncoderRoundTripTests {
    struct Described: Sendable, CustomStringConvertible {
        var method: String
        var target: String
        var fields: [HeaderField]
        var body: RequestEncoder.Body
        var description: String { "\(method) \(target)" }
    }

    static let requests: [Described] = [
        Described(method: "GET", target: "/index.html?q=1", fields: [HeaderField(name: "Accept", value: "*/*")], body: .none),
        Described(method: "POST", target: "/form", fields: [HeaderField(name: "Content-Type", value: "application/x-www-form-urlencoded")],
                  body: .contentLength(Array("a=1&b=%C3%A9".utf8))),
        Described(method: "PUT", target: "/upload", fields: [HeaderField(name: "X-Dup", value: "1"), HeaderField(name: "x-dup", value: "2")],
                  body: .chunked([Array("hello ".utf8), Array(repeating: 0x61, count: 300)], trailers: [HeaderField(name: "X-Sum", value: "abc")])),
        Described(method: "DELETE", target: "/items/7", fields: [HeaderField(name: "X-Empty", value: ""), HeaderField(name: "X-Inner", value: "a \t b")], body: .none),
        Described(method: "OPTIONS", target: "*", fields: [], body: .contentLength([])),
        Described(method: "GET", target: "http://example.com:8080/abs", fields: [HeaderField(name: "X-Bytes", value: "caf\u{E9}")], body: .none),
    ]

    /// The body a description carries, joined.
    private func bodyBytes(_ body: RequestEncoder.Body) -> [UInt8] {
        switch body {
        case .none: return []
        case .contentLength(let bytes): return bytes
        case .chunked(let pieces, _): return pieces.flatMap { $0 }
        }
    }

    @Test(arguments: requests)
    func readsBackAsEncoded(request: Described) throws {
        let bytes = try RequestEncoder.encode(method: request.method, target: request.target, authority: "example.com",
                                              fields: request.fields, body: request.body)
        for pieces in [[bytes], bytes.map { [$0] }] {
            let parser = RequestParser()
            var events: [RequestParser.Event] = []
            for piece in pieces { events += try parser.feed(piece) }
            try parser.finish()
            guard case .head(let head) = events.first, case .end(let trailers) = events.last else {
                Issue.record("\(request): events \(events)")
                continue
            }
            #expect(head.method == request.method && head.target == request.target)
            #expect(head.versionMajor == 1 && head.versionMinor == 1)
            // Host first, then the caller's fields byte for byte, then the framing field.
            let fields = Array(head.fields)
            #expect(fields.first == HeaderField(name: "Host", value: "example.com"))
            #expect(Array(fields.dropFirst().prefix(request.fields.count)) == request.fields)
            let body = events.reduce(into: [UInt8]()) { if case .body(let piece) = $1 { $0 += piece } }
            #expect(body == bodyBytes(request.body))
            if case .chunked(_, let sent) = request.body { #expect(Array(trailers) == sent) } else { #expect(trailers.isEmpty) }
        }
    }

    @Test func requestsWrittenBackToBackReadAsAPipeline() throws {
        var stream: [UInt8] = []
        for request in Self.requests {
            stream += try RequestEncoder.encode(method: request.method, target: request.target, authority: "h", fields: request.fields, body: request.body)
        }
        let events = try RequestParser().feed(stream)
        let heads = events.compactMap { event -> String? in if case .head(let head) = event { return head.method } else { return nil } }
        #expect(heads == Self.requests.map(\.method))
        #expect(events.filter { if case .end = $0 { return true } else { return false } }.count == Self.requests.count)
    }
}
