import Testing

@testable import UVHTTP1

/// What a decoder keeps while its connection is idle: storage of a usual head's size, never
/// what one large head grew.
@Suite(.tags(.unit)) struct ResponseParserIdleMemoryTests {
    /// Decodes `response` whole and returns how many bytes were consumed.
    private func decodeWhole(_ decoder: ResponseParser, _ response: String) throws -> Int {
        var events: [ResponseEvent] = []
        let bytes = Array(response.utf8)
        return try bytes.withUnsafeBytes { try decoder.feed($0, into: &events) }
    }

    private func largeHead(fields: Int) -> String {
        var head = "HTTP/1.1 200 OK\r\n"
        for index in 0..<fields { head += "X-Field-\(index): \(String(repeating: "v", count: 60))\r\n" }
        return head + "Content-Length: 2\r\n\r\nok"
    }

    @Test func idleDecoderGivesBackWhatALargeHeadGrew() throws {
        let decoder = ResponseParser(options: .client())
        let response = largeHead(fields: 300)
        #expect(try decodeWhole(decoder, response) == response.utf8.count)
        #expect(decoder.isComplete)
        let grown = decoder.scratchCapacity
        #expect(grown.bytes >= 300 * 60)
        #expect(grown.lines >= 300)
        #expect(grown.bounds >= 300)

        decoder.releaseIdleMemory()
        let idle = decoder.scratchCapacity
        #expect(idle.bytes == SectionRecord.initialBytes)
        #expect(idle.lines <= SectionRecord.keptLines)
        #expect(idle.bounds == 0)

        // The next response decodes as before.
        decoder.expectResponse(toHEAD: false)
        let small = "HTTP/1.1 204 No Content\r\nServer: t\r\n\r\n"
        #expect(try decodeWhole(decoder, small) == small.utf8.count)
        #expect(decoder.isComplete)
    }

    @Test func idleDecoderKeepsUsualStorage() throws {
        let decoder = ResponseParser(options: .client())
        let response = "HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok"
        #expect(try decodeWhole(decoder, response) == response.utf8.count)
        let used = decoder.scratchCapacity
        // The bounds scratch is sized by the head's fields, not a fixed guess.
        #expect(used.bounds >= 3 && used.bounds < 16)
        decoder.releaseIdleMemory()
        let idle = decoder.scratchCapacity
        #expect(idle.bytes == used.bytes)
        #expect(idle.lines == used.lines)
        #expect(idle.bounds == used.bounds)
    }
}
