import CLLHTTP
import Testing

@testable import UVHTTP1

/// A message that repeats the connection's replayable template (same head bytes, Date's value
/// aside; kept alive; framed by Content-Length alone) is decoded without llhttp
/// (ResponseParser+MessageReplay.swift). Each stream here is decoded the way a connection reads
/// it, by a decoder that replays messages and by one that leaves every message to llhttp, in one
/// read, in two reads split at every offset, and one byte per read: both must hand on the same
/// events from the same feeds, consume the same bytes and end the same way, and every split must
/// decode to what one read does.
@Suite(.tags(.unit)) struct MessageReplayTests {
    private static let date1 = "Tue, 24 Nov 2026 15:00:01 GMT"
    private static let date2 = "Tue, 24 Nov 2026 15:00:02 GMT"
    private static let date3 = "Tue, 24 Nov 2026 15:00:03 GMT"

    /// What the benchmark's nginx sends: a 12-byte body after the head.
    private static func nginx(_ date: String, server: String = "nginx", body: String = "Hello world\n") -> String {
        "HTTP/1.1 200 OK\r\nServer: \(server)\r\nDate: \(date)\r\nContent-Type: text/plain\r\n"
            + "Content-Length: \(body.utf8.count)\r\nConnection: keep-alive\r\n\r\n\(body)"
    }

    @Test func repeatedMessagesAreDecodedWithoutLlhttp() {
        let stream = [Self.nginx(Self.date1), Self.nginx(Self.date2), Self.nginx(Self.date2), Self.nginx(Self.date3)]
        let run = Self.checkReplayMatchesLlhttp(stream, expectReplayed: 3)
        let heads = run.responses.compactMap(\.finalHead)
        #expect(heads.count == 4)
        #expect(heads.dropFirst().allSatisfy { $0.template === heads[0] && $0.dateIndex == 1 })
        #expect(heads.map { $0.headers.firstValue(named: "date") } == [Self.date1, Self.date2, Self.date2, Self.date3])
        #expect(run.responses.allSatisfy { $0.body == Array("Hello world\n".utf8) && $0.outcome == .complete(keepAlive: true) })
    }

    @Test func llhttpIsLeftInItsBetweenMessagesState() throws {
        let decoder = ResponseParser(options: .client())
        for date in [Self.date1, Self.date2] {
            decoder.expectResponse(toHEAD: false)
            let bytes = Array(Self.nginx(date).utf8)
            var events: [ResponseEvent] = []
            let consumed = try bytes.withUnsafeBytes { raw throws(HTTP1ParseError) in try decoder.feed(raw, into: &events) }
            #expect(consumed == bytes.count)
            #expect(decoder.isComplete && decoder.keepAlive)
            #expect(decoder.announcedBodyLength == 12)
        }
        #expect(decoder.replayedMessageCount == 1)
        // llhttp never started the second message: no status, no flags, not paused.
        #expect(decoder.parser.pointee.status_code == 0)
        #expect(decoder.parser.pointee.flags == 0)
        #expect(llhttp_get_errno(decoder.parser) == HPE_OK)
    }

    @Test func aPipelinedResponseInTheSameReadBelongsToTheNextRequest() {
        // The replayed message ends at its Content-Length; the bytes after it start the next,
        // which goes to llhttp (another server name), and the one after that repeats it.
        let other = { (date: String) in Self.nginx(date, server: "other") }
        let run = Self.checkReplayMatchesLlhttp([Self.nginx(Self.date1), Self.nginx(Self.date2) + other(Self.date2) + other(Self.date3)],
                                                expectReplayed: 2)
        #expect(run.responses.count == 4)
        #expect(run.responses.allSatisfy { $0.outcome == .complete(keepAlive: true) })
    }

    @Test func aBodySplitAcrossReadsGoesOnInTheNextRead() throws {
        let decoder = ResponseParser(options: .client())
        decoder.expectResponse(toHEAD: false)
        var events: [ResponseEvent] = []
        _ = try Array(Self.nginx(Self.date1).utf8).withUnsafeBytes { raw throws(HTTP1ParseError) in try decoder.feed(raw, into: &events) }
        decoder.expectResponse(toHEAD: false)
        let second = Array(Self.nginx(Self.date2).utf8)
        events = []
        let firstPart = try Array(second.dropLast(7)).withUnsafeBytes { raw throws(HTTP1ParseError) in try decoder.feed(raw, into: &events) }
        #expect(firstPart == second.count - 7)
        #expect(!decoder.isComplete && decoder.replayedMessageCount == 1)
        #expect(events.count == 2 && events.last == .body(Array("Hello".utf8)))
        events = []
        let rest = Array(second.suffix(7)) + Array("HTTP/1.1".utf8)
        let secondPart = try rest.withUnsafeBytes { raw throws(HTTP1ParseError) in try decoder.feed(raw, into: &events) }
        #expect(secondPart == 7)
        #expect(events == [.body(Array(" world\n".utf8)), .end(trailers: ReceivedFields())])
        #expect(decoder.isComplete && decoder.keepAlive)
    }

    @Test func theConnectionClosingInsideAReplayedBodyTruncatesIt() {
        let cut = String(Self.nginx(Self.date2).dropLast(3))
        let run = Self.checkReplayMatchesLlhttp([Self.nginx(Self.date1), cut], expectReplayed: 1)
        // At the end of the stream, the same on the replayed path as on llhttp's.
        let streamLength = Self.nginx(Self.date1).utf8.count + cut.utf8.count
        #expect(run.responses.last?.outcome
                == .failed(HTTP1ParseError(kind: .truncatedBody, reason: "connection closed inside the body", offset: streamLength)))
    }

    @Test(arguments: [
        // Bytes llhttp refuses in a field value, or that the scan reads otherwise: llhttp decides.
        "Tue,\u{1}24 Nov 2026 15:00:02 GMT", "Tue, 24 Nov 2026 15:00:02 GM\u{7F}", "Tue, 24 Nov 2026\t15:00:02 GMT",
        " ue, 24 Nov 2026 15:00:02 GMT", "Tue, 24 Nov 2026 15:00:02 G\u{E9}", "Tue, 24 Nov 2026\r\nX: 15:00:02 G",
        // Another length.
        "Tue, 24 Nov 2026 15:00:02 GMT+", "Tue, 24 Nov 2026 15:00:2 GMT",
    ])
    func aDateTheReplayCannotVouchForGoesToLlhttp(date: String) {
        let run = Self.checkReplayMatchesLlhttp([Self.nginx(Self.date1), Self.nginx(date), Self.nginx(Self.date2)])
        // The second message is never replayed (the third may be, once the second was decoded).
        #expect(run.replayed <= 1)
        // Nor after a replayed head whose Date it does not repeat.
        Self.checkReplayMatchesLlhttp([Self.nginx(Self.date1), Self.nginx(Self.date2), Self.nginx(date)], expectReplayed: 1)
    }

    @Test func anyPrintableDateOfTheSameLengthReplaysAsLlhttpAcceptsIt() {
        let odd = "!\"#$%&'()*+,-./0123456789:;<~"
        #expect(odd.utf8.count == Self.date1.utf8.count)
        let run = Self.checkReplayMatchesLlhttp([Self.nginx(Self.date1), Self.nginx(odd)], expectReplayed: 1)
        #expect(run.responses[1].finalHead?.headers.firstValue(named: "date") == odd)
    }

    @Test func aResponseThatDiffersAfterAReplayedOneGoesToLlhttp() {
        let run = Self.checkReplayMatchesLlhttp([
            Self.nginx(Self.date1), Self.nginx(Self.date2),
            Self.nginx(Self.date3, body: "Hello, world\n"), // another Content-Length: a new template
            "HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\n\r\nno\n",
            Self.nginx(Self.date2, body: "Hello, world\n"), // the 404 is the template
            Self.nginx(Self.date3, body: "Hello, world\n"), // the one before is: replayed
            "HTTP/1.1 200 OK\r\nDate: \(Self.date1)\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 x",
        ], expectReplayed: 2)
        #expect(run.responses.map(\.body.count) == [12, 12, 13, 3, 13, 13, 2, 0])
        #expect(run.responses.last?.outcome?.failureKind == .malformed)
    }

    @Test func onlyKeptAliveContentLengthTemplatesReplayTheirMessages() {
        // Chunked, EOF-framed after close, 204, 304 and HTTP/1.0 without keep-alive: heads replay, llhttp frames.
        let chunked = { (date: String) in "HTTP/1.1 200 OK\r\nDate: \(date)\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n" }
        Self.checkReplayMatchesLlhttp([chunked(Self.date1), chunked(Self.date2)], expectReplayed: 0)
        let noContent = { (date: String) in "HTTP/1.1 204 No Content\r\nDate: \(date)\r\nContent-Length: 0\r\n\r\n" }
        Self.checkReplayMatchesLlhttp([noContent(Self.date1), noContent(Self.date2), noContent(Self.date3)], expectReplayed: 0)
        let notModified = { (date: String) in "HTTP/1.1 304 Not Modified\r\nDate: \(date)\r\nContent-Length: 5\r\n\r\n" }
        Self.checkReplayMatchesLlhttp([notModified(Self.date1), notModified(Self.date2)], expectReplayed: 0)
        let upgrade = { (date: String) in "HTTP/1.1 200 OK\r\nDate: \(date)\r\nUpgrade: h2c\r\nContent-Length: 2\r\n\r\nok" }
        Self.checkReplayMatchesLlhttp([upgrade(Self.date1), upgrade(Self.date2)], expectReplayed: 0)
        let close = { (date: String) in "HTTP/1.1 200 OK\r\nDate: \(date)\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok" }
        Self.checkReplayMatchesLlhttp([close(Self.date1), close(Self.date2)], expectReplayed: 0)
        // Kept alive by HTTP/1.0's own rule, with an empty body: replayed.
        let old = { (date: String) in "HTTP/1.0 200 OK\r\nDate: \(date)\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n" }
        Self.checkReplayMatchesLlhttp([old(Self.date1), old(Self.date2), old(Self.date3)], expectReplayed: 2)
    }

    @Test func responsesToHEADAreNeverReplayedAndNeverTemplates() {
        let head = { (date: String) in "HTTP/1.1 200 OK\r\nDate: \(date)\r\nContent-Length: 5\r\n\r\n" }
        // GET, HEAD, GET: only the last is replayed (the HEAD's head has no body).
        Self.checkReplayMatchesLlhttp([head(Self.date1) + "hello", head(Self.date2), head(Self.date3) + "hello"],
                                      heads: [false, true, false], expectReplayed: 1)
        // A template made for a HEAD says nothing of a GET's framing.
        Self.checkReplayMatchesLlhttp([head(Self.date1), head(Self.date2) + "hello", head(Self.date3) + "hello"],
                                      heads: [true, false, false], expectReplayed: 0)
    }

    @Test func aFinalResponseAfterAnInterimOneIsReplayed() {
        let run = Self.checkReplayMatchesLlhttp([Self.nginx(Self.date1), "HTTP/1.1 100 Continue\r\n\r\n" + Self.nginx(Self.date2)],
                                                expectReplayed: 1)
        #expect(run.responses[1].events.first.map { if case .informational = $0 { true } else { false } } == true)
    }

    @Test func limitsHoldOnTheReplay() {
        // A body limit the body meets exactly, and a head limit the head meets exactly.
        var limits = ResponseParser.Options.client()
        limits.maxBodyBytes = 12
        limits.maxHeaderBytes = Self.nginx(Self.date1).utf8.count - 12
        Self.checkReplayMatchesLlhttp([Self.nginx(Self.date1), Self.nginx(Self.date2), Self.nginx(Self.date3)], limits: limits,
                                      expectReplayed: 2)
        // A body over the limit: the template's message fails, so no replay follows.
        limits.maxBodyBytes = 11
        let run = Self.checkReplayMatchesLlhttp([Self.nginx(Self.date1), Self.nginx(Self.date2)], limits: limits, expectReplayed: 0)
        #expect(run.responses.first?.outcome?.failureKind == .bodyTooLarge)
    }

    @Test func theReplayChecksTheBodyLimitAsLlhttpsCallbacksDo() throws {
        // The limit only shrinks when a test says so; a template cannot exceed it otherwise.
        var limits = ResponseParser.Options.client()
        limits.maxBodyBytes = 12
        let decoder = ResponseParser(options: limits)
        var events: [ResponseEvent] = []
        decoder.expectResponse(toHEAD: false)
        _ = try Array(Self.nginx(Self.date1).utf8).withUnsafeBytes { raw throws(HTTP1ParseError) in try decoder.feed(raw, into: &events) }
        #expect(decoder.isComplete)
        let template = decoder.headReplay
        let second = Array(Self.nginx(Self.date2).utf8)
        let replayWithLongerBody = HeadReplay(
            head: template!.head, dateIndex: template!.dateIndex, dateValue: template!.dateValue, contentLength: 13,
            sawTransferEncoding: false, transferCodingCount: 0, transferCodingsAllChunked: true, bodyLength: 13)
        decoder.headReplay = replayWithLongerBody
        decoder.expectResponse(toHEAD: false)
        events = []
        let error = #expect(throws: HTTP1ParseError.self) {
            _ = try second.withUnsafeBytes { raw throws(HTTP1ParseError) in try decoder.feed(raw, into: &events) }
        }
        #expect(error?.kind == .bodyTooLarge)
        #expect(error?.reason == "Content-Length 13 exceeds the 12-byte body limit")
        #expect(events.count == 1, "the head is delivered before the body is refused")
    }

    // MARK: - Differential harness

    /// How one response ended.
    enum Outcome: Equatable {
        case complete(keepAlive: Bool)
        case failed(HTTP1ParseError)

        var failureKind: HTTP1ParseError.Kind? {
            if case .failed(let error) = self { return error.kind }
            return nil
        }
    }

    /// One response as a run decoded it.
    struct Response: Equatable {
        /// Events as each feed produced them, bodies not merged.
        var events: [ResponseEvent] = []
        var outcome: Outcome?
        /// Where in the stream it ended (bytes consumed up to its end or its error's feed).
        var endOffset = 0
        /// Its final head's template, as the index of the response whose final head it is.
        var templateIndex: Int?
        var dateIndex = -1

        var finalHead: ResponseHead? { events.firstHead }
        var body: [UInt8] { events.bodyBytes }
    }

    /// A whole run: the responses, each feed's consumed count, and how many messages were replayed.
    struct Run: Equatable {
        var responses: [Response] = []
        var consumed: [Int] = []
        var replayed = 0

        /// The run with each response's body events merged, and of an error only its kind and
        /// not where it was thrown (to compare runs read in other pieces).
        var merged: Run {
            var copy = self
            for index in copy.responses.indices {
                copy.responses[index].events = copy.responses[index].events.mergingBodies
                if case .failed(let error) = copy.responses[index].outcome {
                    copy.responses[index].outcome = .failed(HTTP1ParseError(kind: error.kind, reason: ""))
                    copy.responses[index].endOffset = -1
                }
            }
            copy.consumed = []
            copy.replayed = 0
            return copy
        }
    }

    /// Decodes `responses` as one stream, in reads split every way, with and without message
    /// replay; expects each split to give the same run with both decoders, and every split the
    /// same merged run as one read. Returns the one-read run of the replaying decoder.
    @discardableResult
    private static func checkReplayMatchesLlhttp(_ responses: [String], heads: [Bool]? = nil,
                                                 limits: ResponseParser.Options = ResponseParser.Options.client(),
                                                 expectReplayed: Int? = nil,
                                                 sourceLocation: SourceLocation = #_sourceLocation) -> Run {
        let stream = Array(responses.joined().utf8)
        let isHEAD = { (index: Int) in heads.map { index < $0.count && $0[index] } ?? false }
        let whole = decode(stream, reads: [stream.count], isHEAD: isHEAD, limits: limits, replay: true)
        let wholeByLlhttp = decode(stream, reads: [stream.count], isHEAD: isHEAD, limits: limits, replay: false)
        #expect(whole.replayingExceptCount == wholeByLlhttp.replayingExceptCount, "one read", sourceLocation: sourceLocation)
        #expect(wholeByLlhttp.replayed == 0, sourceLocation: sourceLocation)
        if let expectReplayed { #expect(whole.replayed == expectReplayed, sourceLocation: sourceLocation) }
        var splits = (0...stream.count).map { [$0, stream.count] }
        splits.append(Array(1...max(stream.count, 1)))
        for reads in splits {
            let replayed = decode(stream, reads: reads, isHEAD: isHEAD, limits: limits, replay: true)
            let byLlhttp = decode(stream, reads: reads, isHEAD: isHEAD, limits: limits, replay: false)
            #expect(replayed.replayingExceptCount == byLlhttp.replayingExceptCount, "reads ending at \(reads.prefix(2))",
                    sourceLocation: sourceLocation)
            #expect(replayed.merged == whole.merged, "reads ending at \(reads.prefix(2)) vs one read", sourceLocation: sourceLocation)
            if replayed.replayingExceptCount != byLlhttp.replayingExceptCount || replayed.merged != whole.merged { break }
        }
        return whole
    }

    /// Feeds `stream` in reads ending at `reads` the way a connection does: each read until the
    /// response completes, re-arming the decoder for the next kept-alive response on the rest of
    /// the same read, and `finish` after the last read.
    private static func decode(_ stream: [UInt8], reads: [Int], isHEAD: (Int) -> Bool, limits: ResponseParser.Options,
                               replay: Bool) -> Run {
        let decoder = ResponseParser(options: limits)
        decoder.replaysMessages = replay
        decoder.expectResponse(toHEAD: isHEAD(0))
        var run = Run()
        var response = Response()
        var finalHeads: [ResponseHead] = []
        func close(_ outcome: Outcome, at offset: Int) {
            response.outcome = outcome
            response.endOffset = offset
            if let head = response.finalHead {
                response.templateIndex = head.template.flatMap { template in finalHeads.firstIndex { $0 === template } }
                response.dateIndex = head.dateIndex
                finalHeads.append(head)
            }
            run.responses.append(response)
            response = Response()
        }
        var start = 0
        reading: for end in reads where end > start {
            while start < end {
                let result = decoder.feed(Array(stream[start..<end]), into: &response.events)
                switch result {
                case .failure(let error):
                    close(.failed(error), at: start)
                    run.replayed = decoder.replayedMessageCount
                    return run
                case .success(let consumed):
                    run.consumed.append(consumed)
                    start += consumed
                }
                guard decoder.isComplete else { break }
                close(.complete(keepAlive: decoder.keepAlive), at: start)
                if !decoder.keepAlive { break reading }
                decoder.expectResponse(toHEAD: isHEAD(run.responses.count))
            }
            start = end
        }
        // A stream that ends between responses leaves nothing to finish.
        if decoder.hasReceivedBytes && !decoder.isComplete {
            do throws(HTTP1ParseError) {
                try decoder.finish(into: &response.events)
                close(.complete(keepAlive: decoder.keepAlive), at: stream.count)
            } catch {
                close(.failed(error), at: stream.count)
            }
        }
        run.replayed = decoder.replayedMessageCount
        return run
    }
}

extension MessageReplayTests.Run {
    /// The run without its replay count, which is what the two decoders differ in.
    fileprivate var replayingExceptCount: Self {
        var copy = self
        copy.replayed = 0
        return copy
    }
}

