import Testing
import UVHTTP1

/// ResponseEncoder through the public API: what it writes, what it refuses, and that the strict
/// parser reads every accepted response back as it was described.
@Suite(.tags(.unit)) struct ResponseEncoderTests {
    private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    /// The fields of `fields` as (name bytes, value bytes), to compare byte for byte.
    private func raw(_ fields: ReceivedFields) -> [[[UInt8]]] {
        (0..<fields.count).map { index in fields.withField(at: index) { [Array($0), Array($1)] } }
    }

    private func raw(_ fields: [HeaderField]) -> [[[UInt8]]] {
        fields.map { [Array($0.name.utf8), Array($0.value.utf8)] }
    }

    @Test func writesStatusLineFieldsAndContentLength() throws {
        let bytes = try ResponseEncoder.encode(status: 200, reason: "OK", fields: [HeaderField(name: "Content-Type", value: "text/plain")],
                                               body: .contentLength(Array("hi".utf8)))
        #expect(text(bytes) == "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nhi")
    }

    @Test func writesChunksSkippingEmptyPiecesThenTrailers() throws {
        let bytes = try ResponseEncoder.encode(status: 200, reason: "OK", body: .chunked([Array("abc".utf8), [], Array(repeating: 0x41, count: 17)],
                                                                                  trailers: [HeaderField(name: "X-Sum", value: "20")]))
        #expect(text(bytes) == "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n11\r\nAAAAAAAAAAAAAAAAA\r\n0\r\nX-Sum: 20\r\n\r\n")
    }

    @Test func writesHTTP10UntilCloseAndEmptyReason() throws {
        #expect(text(try ResponseEncoder.encode(version: .http1_0, status: 599, reason: "", body: .untilClose([0x7A])))
                == "HTTP/1.0 599 \r\n\r\nz")
    }

    @Test(arguments: [
        (99, "OK", [HeaderField](), ResponseEncoder.Body.none, HTTP1EncodeError.Kind.invalidStatus),
        (1000, "OK", [], .none, .invalidStatus),
        (200, "O\r\nK", [], .none, .invalidReason),
        (200, "O\u{7F}K", [], .none, .invalidReason),
        (200, "OK", [HeaderField(name: "Bad Name", value: "v")], .none, .invalidFieldName),
        (200, "OK", [HeaderField(name: "", value: "v")], .none, .invalidFieldName),
        (200, "OK", [HeaderField(name: "X", value: "a\r\nInjected: 1")], .none, .invalidFieldValue),
        (200, "OK", [HeaderField(name: "X", value: "a\0b")], .none, .invalidFieldValue),
        (200, "OK", [HeaderField(name: "X", value: " a")], .none, .invalidFieldValue),
        (200, "OK", [HeaderField(name: "X", value: "a\t")], .none, .invalidFieldValue),
        (200, "OK", [HeaderField(name: "transfer-encoding", value: "chunked")], .chunked([], trailers: []), .invalidFraming),
        (200, "OK", [HeaderField(name: "Content-Length", value: "1")], .contentLength([1]), .invalidFraming),
        (200, "OK", [HeaderField(name: "Content-Length", value: "+1")], .none, .invalidFraming),
        (200, "OK", [HeaderField(name: "Content-Length", value: "1"), HeaderField(name: "Content-Length", value: "1")], .none, .invalidFraming),
        (204, "No Content", [HeaderField(name: "Content-Length", value: "0")], .none, .bodyNotAllowed),
        (204, "No Content", [], .contentLength([]), .bodyNotAllowed),
        (304, "Not Modified", [], .untilClose([1]), .bodyNotAllowed),
        (100, "Continue", [], .chunked([], trailers: []), .bodyNotAllowed),
        (200, "OK", [], .chunked([[1]], trailers: [HeaderField(name: "Content-Length", value: "1")]), .invalidFraming),
        (200, "OK", [], .chunked([[1]], trailers: [HeaderField(name: "X", value: "\n")]), .invalidFieldValue),
    ])
    func refuses(status: Int, reason: String, fields: [HeaderField], body: ResponseEncoder.Body, kind: HTTP1EncodeError.Kind) {
        do {
            let bytes = try ResponseEncoder.encode(status: status, reason: reason, fields: fields, body: body)
            Issue.record("encoded \(String(decoding: bytes, as: UTF8.self).debugDescription)")
        } catch {
            #expect(error.kind == kind, "\(error)")
        }
    }

    @Test func refusesChunkedInHTTP10() {
        #expect(throws: HTTP1EncodeError(.invalidFraming, "chunked framing in an HTTP/1.0 response (RFC 9112 §6.1)")) {
            try ResponseEncoder.encode(version: .http1_0, status: 200, reason: "OK", body: .chunked([[1]]))
        }
    }

    /// Encodes, parses with strict default options in one feed and a byte at a time, and checks
    /// that the head, the fields (byte for byte), the body and the trailers come back.
    private func roundTrip(version: ResponseEncoder.Version = .http1_1, status: Int, reason: String, fields: [HeaderField],
                           body: ResponseEncoder.Body, framing: HeaderField?, expectedBody: [UInt8], trailers: [HeaderField] = [],
                           toHEAD: Bool = false) throws {
        let bytes = try ResponseEncoder.encode(version: version, status: status, reason: reason, fields: fields, body: body)
        for cuts in [[], Array(1..<bytes.count)] {
            let parser = ResponseParser()
            parser.expectResponse(toHEAD: toHEAD)
            var events: [ResponseParser.Event] = []
            var start = 0
            for end in cuts + [bytes.count] {
                start += try bytes.withUnsafeBytes { try parser.feed(UnsafeRawBufferPointer(rebasing: $0[start..<end])) { events.append($0) } }
            }
            #expect(start == bytes.count)
            events += try parser.finish()
            let merged = mergingBodies(events)
            guard case .head(let head)? = merged.first, case .end(let received)? = merged.last else {
                Issue.record("events \(merged)")
                return
            }
            #expect(head.versionMinor == (version == .http1_0 ? 0 : 1))
            #expect(head.status == status)
            #expect(Array(head.reason.utf8) == Array(reason.utf8))
            #expect(raw(head.fields) == raw(fields + (framing.map { [$0] } ?? [])))
            let receivedBody: [UInt8] = merged.count == 3 ? { if case .body(let b) = merged[1] { b } else { [] } }() : []
            #expect(receivedBody == expectedBody)
            #expect(merged.count == (expectedBody.isEmpty ? 2 : 3))
            #expect(raw(received) == raw(trailers))
        }
    }

    @Test func contentLengthResponseReadsBack() throws {
        let fields = [HeaderField(name: "Content-Type", value: "text/plain; charset=utf-8"), HeaderField(name: "x-dup", value: "1"),
                      HeaderField(name: "X-Dup", value: "caf\u{E9} \u{FC}ber\tend"), HeaderField(name: "Empty", value: "")]
        try roundTrip(status: 200, reason: "Fine \u{E9}", fields: fields, body: .contentLength(Array(0...255)),
                      framing: HeaderField(name: "Content-Length", value: "256"), expectedBody: Array(0...255))
    }

    @Test func chunkedResponseWithTrailersReadsBack() throws {
        let trailers = [HeaderField(name: "X-Checksum", value: "abc"), HeaderField(name: "X-Other", value: "a  b")]
        try roundTrip(status: 201, reason: "Created", fields: [HeaderField(name: "Trailer", value: "X-Checksum, X-Other")],
                      body: .chunked([Array("hello ".utf8), [], Array(repeating: 0x0D, count: 300)], trailers: trailers),
                      framing: HeaderField(name: "Transfer-Encoding", value: "chunked"),
                      expectedBody: Array("hello ".utf8) + Array(repeating: 0x0D, count: 300), trailers: trailers)
    }

    @Test func untilCloseResponseReadsBack() throws {
        try roundTrip(version: .http1_0, status: 200, reason: "OK", fields: [], body: .untilClose(Array("to the end\r\n\r\n".utf8)),
                      framing: nil, expectedBody: Array("to the end\r\n\r\n".utf8))
    }

    @Test func bodilessResponsesReadBack() throws {
        try roundTrip(status: 304, reason: "Not Modified", fields: [HeaderField(name: "ETag", value: "\"v1\"")], body: .none, framing: nil, expectedBody: [])
        try roundTrip(status: 204, reason: "", fields: [], body: .none, framing: nil, expectedBody: [])
        // A HEAD response says the length a GET would have had.
        try roundTrip(status: 200, reason: "OK", fields: [HeaderField(name: "Content-Length", value: "1234")], body: .none,
                      framing: nil, expectedBody: [], toHEAD: true)
    }

    @Test func interimResponseReadsBackBeforeTheFinalOne() throws {
        let interim = try ResponseEncoder.encode(status: 103, reason: "Early Hints", fields: [HeaderField(name: "Link", value: "</a.css>; rel=preload")])
        let final = try ResponseEncoder.encode(status: 200, reason: "OK", body: .contentLength([1, 2]))
        let parse = parsePublicly(interim + final)
        #expect(parse.error == nil)
        guard parse.events.count == 4, case .interim(let hints) = parse.events[0], case .head(let head) = parse.events[1] else {
            Issue.record("events \(parse.events)")
            return
        }
        #expect(hints.status == 103 && hints.fields.map(\.value) == ["</a.css>; rel=preload"])
        #expect(head.status == 200 && parse.events[2] == .body([1, 2]))
    }
}
