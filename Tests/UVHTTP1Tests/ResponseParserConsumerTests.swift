import Testing

@testable import UVHTTP1

/// What the decoder hands its consumer directly: heads built from the one recorded copy of the
/// head, and body bytes as views of the bytes fed.
@Suite(.tags(.unit)) struct ResponseParserConsumerTests {
    /// Records where each body piece lay.
    private final class Recorder: ResponseParserConsumer {
        var heads: [ResponseHead] = []
        var bodyPieces: [(start: UnsafeRawPointer?, count: Int)] = []
        var ended = false

        func parserReceivedInterim(_ head: ResponseHead) { heads.append(head) }
        func parserReceivedHead(_ head: ResponseHead) { heads.append(head) }
        func parserReceivedBody(_ bytes: UnsafeRawBufferPointer) { bodyPieces.append((bytes.baseAddress, bytes.count)) }
        func parserReceivedEnd(trailers: ReceivedFields) { ended = true }
    }

    @Test func bodyBytesAreViewsOfTheFedBytes() throws {
        let head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        let input = Array((head + "5\r\nhello\r\n3\r\nabc\r\n0\r\n\r\n").utf8)
        let decoder = ResponseParser(options: .client())
        let recorder = Recorder()
        try input.withUnsafeBytes { all in
            _ = try decoder.feed(all, to: recorder)
            let base = all.baseAddress!
            #expect(recorder.bodyPieces.map { $0.start.map { $0 - base } } == [head.utf8.count + 3, head.utf8.count + 13])
            #expect(recorder.bodyPieces.map(\.count) == [5, 3])
        }
        #expect(recorder.ended)
    }

    @Test func aHeadKeepsItsRawBytesAndTheFieldsPointIntoThem() throws {
        let head = "HTTP/1.1 404 Not Found\r\nServer: x\r\nContent-Length:  0 \r\n\r\n"
        let decoder = ResponseParser(options: .client())
        let recorder = Recorder()
        _ = try Array(head.utf8).withUnsafeBytes { try decoder.feed($0, to: recorder) }
        let received = try #require(recorder.heads.first)
        #expect(received.reason == "Not Found")
        #expect(received.headers.sectionByteCount == head.utf8.count)
        #expect(received.headers.withSectionBytes { Array($0) } == Array(head.utf8))
        let server = received.headers.bounds(at: 0)
        #expect((server.nameStart, server.nameEnd, server.valueStart, server.valueEnd) == (24, 30, 32, 33))
        #expect(received.headers[1] == HeaderField(name: "Content-Length", value: "0"))
    }
}
