import HTTPTypes
import Testing
import UVHTTP1

/// The event API, through the public surface only.
@Suite(.tags(.unit)) struct ResponseParserEventsTests {
    @Test func headBodyAndEnd() throws {
        let parser = ResponseParser()
        let events = try parser.feed(Array("HTTP/1.0 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 4\r\n\r\nnope".utf8))
        #expect(events.count == 3)
        guard case .head(let head) = events[0] else { Issue.record("no head"); return }
        #expect(head.versionMajor == 1 && head.versionMinor == 0)
        #expect(head.status == 404 && head.reason == "Not Found")
        #expect(head.fields[0] == HeaderField(name: "Content-Type", value: "text/plain"))
        #expect(head.httpFields[.contentType] == "text/plain")
        #expect(head.httpResponse.status == .notFound)
        #expect(events[1] == .body(Array("nope".utf8)))
        #expect(events[2] == .end(trailers: []))
        #expect(parser.isComplete && !parser.keepAlive)
    }

    @Test func interimHeadsAndTrailers() throws {
        let input = "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
            + "2\r\nhi\r\n0\r\nX-Sum: 1\r\n\r\n"
        let events = try ResponseParser().feed(Array(input.utf8))
        guard case .interim(let early) = events.first, case .head(let head) = events[1] else { Issue.record("\(events)"); return }
        #expect(early.status == 103 && early.fields.httpFields[HTTPField.Name("Link")!] == "</a>")
        #expect(head.status == 200)
        #expect(mergingBodies(events).dropFirst(2) == [.body(Array("hi".utf8)), .end(trailers: [HeaderField(name: "X-Sum", value: "1")])])
    }

    @Test func severalResponsesOnOneStream() throws {
        let one = "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\na"
        let two = "HTTP/1.1 201 Created\r\nContent-Length: 1\r\n\r\nb"
        // The array variant goes on by itself.
        let events = try ResponseParser().feed(Array((one + two).utf8))
        #expect(events.count == 6)
        guard case .head(let second) = events[3] else { Issue.record("\(events)"); return }
        #expect(second.status == 201)
        // The closure variant stops at each end.
        let parser = ResponseParser()
        let bytes = Array((one + two).utf8)
        var seen: [ResponseParser.Event] = []
        let consumed = try bytes.withUnsafeBytes { raw in try parser.feed(raw) { seen.append($0) } }
        #expect(consumed == one.utf8.count)
        #expect(seen.count == 3)
        parser.expectResponse(toHEAD: false)
        let rest = try bytes.withUnsafeBytes { raw in try parser.feed(UnsafeRawBufferPointer(rebasing: raw[consumed...])) { seen.append($0) } }
        #expect(rest == two.utf8.count)
        #expect(seen == events)
    }

    @Test func aResponseToHEADHasNoBody() throws {
        let parser = ResponseParser()
        parser.expectResponse(toHEAD: true)
        var seen: [ResponseParser.Event] = []
        let bytes = Array("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n".utf8)
        _ = try bytes.withUnsafeBytes { raw in try parser.feed(raw) { seen.append($0) } }
        #expect(seen.count == 2)
        #expect(seen.last == .end(trailers: []))
    }

    @Test func aBodyFramedByTheCloseEndsAtFinish() throws {
        let parser = ResponseParser()
        let events = try parser.feed(Array("HTTP/1.1 200 OK\r\n\r\nuntil the close".utf8))
        #expect(events.last == .body(Array("until the close".utf8)))
        #expect(try parser.finish() == [.end(trailers: [])])
        // Complete: finishing again is nothing.
        #expect(try parser.finish() == [])
    }

    @Test func eventsBeforeAnErrorReachTheClosure() {
        let parser = ResponseParser(options: .init(maxBodyBytes: 2))
        var seen: [ResponseParser.Event] = []
        let bytes = Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n".utf8)
        let error = #expect(throws: HTTP1ParseError.self) {
            _ = try bytes.withUnsafeBytes { raw in try parser.feed(raw) { seen.append($0) } }
        }
        #expect(error?.kind == .bodyTooLarge)
        #expect(seen.count == 2)
        #expect(seen.last == .body(Array("ab".utf8)))
    }
}
