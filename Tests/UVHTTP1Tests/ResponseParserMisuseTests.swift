import Testing
import UVHTTP1

/// The orders of calls that would leave a harness loop spinning or read a stream wrongly, which
/// trap with a message instead, and their neighbours that stay legal. Public surface only.
@Suite(.tags(.childProcess)) struct ResponseParserMisuseTests {
    static let one = Array("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\na".utf8)
    static let two = Array("HTTP/1.1 201 Created\r\nContent-Length: 1\r\n\r\nb".utf8)

    @Test func feedingAfterTheEndWithoutExpectResponseTraps() async {
        await #expect(processExitsWith: .failure) {
            let parser = ResponseParser()
            let bytes = Self.one + Self.two
            var start = 0
            // A harness loop that forgets to re-arm: before, the second feed consumed 0 bytes
            // with no event and no error, forever.
            while start < bytes.count {
                start += try bytes.withUnsafeBytes { raw in try parser.feed(UnsafeRawBufferPointer(rebasing: raw[start...])) { _ in } }
            }
        }
    }

    @Test func anEmptyFeedAfterTheEndAndReArmingStayLegal() throws {
        let parser = ResponseParser()
        var events: [ResponseParser.Event] = []
        let bytes = Self.one + Self.two
        let first = try bytes.withUnsafeBytes { raw in try parser.feed(raw) { events.append($0) } }
        #expect(first == Self.one.count && parser.isComplete)
        #expect(try [UInt8]().withUnsafeBytes { raw in try parser.feed(raw) { events.append($0) } } == 0)
        parser.expectResponse(toHEAD: false)
        let second = try bytes.withUnsafeBytes { raw in try parser.feed(UnsafeRawBufferPointer(rebasing: raw[first...])) { events.append($0) } }
        #expect(second == Self.two.count && events.count == 6)
    }

    @Test func feedArrayWithBytesAfterAResponseToHEADTraps() async {
        await #expect(processExitsWith: .failure) {
            let parser = ResponseParser()
            parser.expectResponse(toHEAD: true)
            // Whether the second request was HEAD too, the bytes cannot tell; before, it was
            // taken as a GET's, and a HEAD's response then swallowed the rest as its body.
            _ = try parser.feed(Array("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n".utf8) + Self.two)
        }
    }

    @Test func feedArrayReadsAResponseToHEADThatIsTheWholeStream() throws {
        let parser = ResponseParser()
        parser.expectResponse(toHEAD: true)
        let events = try parser.feed(Array("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n".utf8))
        #expect(events.count == 2 && events.last == .end(trailers: []) && parser.isComplete)
        // After it, feed([UInt8]) goes on with responses to requests that were not HEAD.
        parser.expectResponse(toHEAD: false)
        #expect(try parser.feed(Self.one + Self.two).count == 6)
    }
}
