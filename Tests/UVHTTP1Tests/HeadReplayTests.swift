import Testing

@testable import UVHTTP1

/// A head that repeats the connection's template head apart from Date's value skips the scan
/// (`HeadReplay`). Each case decodes one connection's responses twice — each response in one read,
/// where the replay can be taken, and one byte per read, where it never is — and both must hand
/// on the same events, the same templates and Date positions, and end the same way.
@Suite(.tags(.unit)) struct HeadReplayTests {
    private static let date1 = "Tue, 24 Nov 2026 15:00:01 GMT"
    private static let date2 = "Tue, 24 Nov 2026 15:00:02 GMT"
    private static let date3 = "Tue, 24 Nov 2026 15:00:03 GMT"

    private static func nginx(_ date: String, body: String = "hello") -> String {
        "HTTP/1.1 200 OK\r\nServer: nginx\r\nDate: \(date)\r\nContent-Type: text/plain\r\nContent-Length: \(body.utf8.count)\r\n"
            + "Connection: keep-alive\r\n\r\n\(body)"
    }

    @Test func headsThatRepeatTheTemplateAreReplayedAndDecodeAsIfScanned() {
        let responses = [Self.nginx(Self.date1), Self.nginx(Self.date2), Self.nginx(Self.date2), Self.nginx(Self.date3)]
        let (whole, replayed) = Self.checkSameAsScanned(responses)
        #expect(replayed == 3)
        let heads = whole.compactMap(\.finalHead)
        #expect(heads.dropFirst().allSatisfy { $0.template === heads[0] && $0.dateIndex == 1 })
        #expect(heads.map { $0.headers.firstValue(named: "date") } == [Self.date1, Self.date2, Self.date2, Self.date3])
        #expect(heads[3].httpResponse.headerFields[.date] == Self.date3)
        #expect(whole.allSatisfy { $0.body == Array("hello".utf8) && $0.keepAlive })
    }

    @Test func aReplayReusesTheLastReplayedHeadsStorageOnceThatHeadIsGone() {
        let decoder = ResponseParser(options: .client())
        func head(_ date: String) -> ResponseHead? {
            decoder.expectResponse(toHEAD: false)
            var events: [ResponseEvent] = []
            let bytes = Array(Self.nginx(date).utf8)
            _ = try? bytes.withUnsafeBytes { try decoder.feed($0, into: &events) }
            for case .head(let head) in events { return head }
            return nil
        }
        func address(_ head: ResponseHead?) -> UnsafeRawPointer? {
            head?.headers.withSectionBytes { UnsafeRawPointer($0.baseAddress) }
        }
        let template = head(Self.date1)
        var second = head(Self.date2)
        let secondStorage = address(second)
        // While the second head lives, the third gets storage of its own and the second keeps its Date.
        let third = head(Self.date3)
        #expect(address(third) != secondStorage)
        #expect(second?.headers.firstValue(named: "date") == Self.date2)
        second = nil
        // The third is alive, so the fourth copies too; once it is gone, the fifth writes in place.
        var fourth = head(Self.date1)
        let fourthStorage = address(fourth)
        let capacity = fourth?.headers.storage.capacity ?? 0
        fourth = nil
        // Storage of that size freed now would go to this array: the fifth head could then not
        // get the same address back from malloc by chance.
        let blocker = [UInt8](unsafeUninitializedCapacity: capacity) { _, count in count = 0 }
        let fifth = head(Self.date2)
        #expect(address(fifth) == fourthStorage)
        #expect(fifth?.headers.firstValue(named: "date") == Self.date2)
        #expect(third?.headers.firstValue(named: "date") == Self.date3)
        #expect(template?.headers.firstValue(named: "date") == Self.date1)
        #expect(decoder.replayedHeadCount == 4)
        withExtendedLifetime(blocker) {}
    }

    @Test func theNextReplayReusesTheLastReplayedHeadOnceNothingElseHoldsIt() {
        // No head is allocated or freed per response, and none is freed on the completion
        // queue's thread; a head something still holds is never changed.
        let decoder = ResponseParser(options: .client())
        func decodeOne(_ date: String) -> ResponseHead? {
            decoder.expectResponse(toHEAD: false)
            var events: [ResponseEvent] = []
            _ = decoder.feed(Array(Self.nginx(date).utf8), into: &events)
            return events.firstHead
        }
        _ = decodeOne(Self.date1)
        weak let replayed = decodeOne(Self.date2)
        #expect(replayed != nil, "the decoder keeps the last replayed head after its events are gone")
        let third = decodeOne(Self.date3)
        #expect(third != nil && third === replayed, "the next replay rewrites it rather than allocating")
        #expect(third?.headers.firstValue(named: "date") == Self.date3)
        #expect(third?.template === decoder.templateHead && third?.dateIndex == 1 && third?.keepAlive == true)
        // Held (here by `third`), it is left as it is: the next replay makes a head of its own.
        let fourth = decodeOne(Self.date2)
        #expect(fourth !== third)
        #expect(third?.headers.firstValue(named: "date") == Self.date3)
        #expect(fourth?.headers.firstValue(named: "date") == Self.date2)
        #expect(decoder.headReplay?.lastHead === fourth)
    }

    @Test func aChunkedTemplateWithTrailersReplays() {
        let chunked = { (date: String) in
            "HTTP/1.1 200 OK\r\nDate: \(date)\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nX-Sum: 1\r\n\r\n"
        }
        let (whole, replayed) = Self.checkSameAsScanned([chunked(Self.date1), chunked(Self.date2)])
        #expect(replayed == 1)
        #expect(whole[1].body == Array("hello".utf8))
        #expect(whole[1].trailers.firstValue(named: "x-sum") == "1")
    }

    @Test func framingComesFromTheTemplateForEveryRequestMethod() {
        // A HEAD's response has no body whatever its Content-Length; the GET after it has one,
        // read with the Content-Length list the template's fields gave.
        let head = { (date: String) in "HTTP/1.1 200 OK\r\nDate: \(date)\r\nContent-Length: 5, 5\r\n\r\n" }
        let (whole, replayed) = Self.checkSameAsScanned([head(Self.date1), head(Self.date2) + "hello", head(Self.date3)],
                                                        heads: [true, false, true])
        #expect(replayed == 2)
        #expect(whole.map(\.body) == [[], Array("hello".utf8), []])
    }

    @Test func aFinalHeadAfterAnInterimOneReplays() {
        let (_, replayed) = Self.checkSameAsScanned([Self.nginx(Self.date1), "HTTP/1.1 100 Continue\r\n\r\n" + Self.nginx(Self.date2)])
        #expect(replayed == 1)
    }

    @Test func aHeadWithoutDateReplaysWhenItsBytesAreTheSame() {
        let plain = "HTTP/1.1 204 No Content\r\nServer: nginx\r\n\r\n"
        let (whole, replayed) = Self.checkSameAsScanned([plain, plain, plain])
        #expect(replayed == 2)
        #expect(whole.compactMap(\.finalHead).allSatisfy { $0.dateIndex == -1 })
    }

    @Test(arguments: [
        // Date's value starts or ends with a space: the scan bounds it differently.
        " ue, 24 Nov 2026 15:00:02 GMT", "Tue, 24 Nov 2026 15:00:02 GM ",
        // A control byte, DEL or obs-text in it: llhttp or the scan may read it otherwise.
        "Tue, 24 Nov 2026\t15:00:02 GMT", "Tue,\u{1}24 Nov 2026 15:00:02 GMT", "Tue, 24 N\u{1F}v 2026 15:00:02 GMT",
        "Tue, 24 Nov 2026 15:00:02 GM\u{7F}", "Tue, 24 Nov 2026 15:00:02 G\u{E9}",
        // A line end inside it changes the lines.
        "Tue, 24 Nov 2026\r\nX: 15:00:02 G", "Tue, 24 Nov 2026\nX-: 15:00:02 G",
    ])
    func aDateValueTheScanWouldReadOtherwiseIsScanned(date: String) {
        let (_, replayed) = Self.checkSameAsScanned([Self.nginx(Self.date1), Self.nginx(date), Self.nginx(Self.date2)])
        // Only the third head may replay, against whichever head became the template.
        #expect(replayed <= 1)
    }

    @Test func aTemplateWithABareLFOrAnObsFoldIsNeverReplayed() {
        let bare = { (date: String) in "HTTP/1.1 200 OK\nDate: \(date)\nContent-Length: 0\n\n" }
        #expect(Self.checkSameAsScanned([bare(Self.date1), bare(Self.date2)]).replayed == 0)
        let folded = { (date: String) in "HTTP/1.1 200 OK\r\nDate: \(date)\r\nX: a\r\n b\r\nContent-Length: 0\r\n\r\n" }
        #expect(Self.checkSameAsScanned([folded(Self.date1), folded(Self.date2)]).replayed == 0)
    }

    @Test func aHeadThatDiffersElsewhereIsScannedAndBecomesTheTemplate() {
        let other = Self.nginx(Self.date2).replacingOccurrences(of: "nginx", with: "nginy")
        let (whole, replayed) = Self.checkSameAsScanned([Self.nginx(Self.date1), other, Self.nginx(Self.date3).replacingOccurrences(of: "nginx", with: "nginy")])
        #expect(replayed == 1)
        let heads = whole.compactMap(\.finalHead)
        #expect(heads[1].template == nil)
        #expect(heads[2].template === heads[1])
    }

    @Test func aHeadSplitAcrossReadsIsScanned() {
        let decoder = ResponseParser(options: .client())
        for (index, response) in [Self.nginx(Self.date1), Self.nginx(Self.date2)].enumerated() {
            decoder.expectResponse(toHEAD: false)
            let bytes = Array(response.utf8)
            var events: [ResponseEvent] = []
            for part in [bytes[..<40], bytes[40...]] {
                _ = try? Array(part).withUnsafeBytes { try decoder.feed($0, into: &events) }
            }
            #expect(decoder.isComplete)
            if index == 1, case .head(let head)? = events.first { #expect(head.template != nil) }
        }
        #expect(decoder.replayedHeadCount == 0)
    }

    @Test func aHeadBeyondTheLimitIsRefusedWhetherOrNotItRepeats() {
        // The template fitted; a head of the same length fits too, so the replay never meets the
        // limit. A longer one is scanned and refused.
        var limits = ResponseParser.Options.client()
        limits.maxHeaderBytes = Self.nginx(Self.date1).utf8.count - 5 + 10
        let long = Self.nginx(Self.date2).replacingOccurrences(of: "nginx", with: "nginx-with-a-longer-name")
        let (whole, _) = Self.checkSameAsScanned([Self.nginx(Self.date1), Self.nginx(Self.date2), long], limits: limits)
        #expect(whole.map(\.failure) == [nil, nil, .headersTooLarge])
    }

    // MARK: - Helpers

    /// What one response decoded to.
    struct Decoded: Equatable {
        var events: [ResponseEvent] = []
        var failure: HTTP1ParseError.Kind?
        var keepAlive = false
        /// The template of each head, as the index of the response whose final head it is.
        var templateIndex: Int?
        var dateIndex = -1

        var finalHead: ResponseHead? { events.firstHead }
        var body: [UInt8] { events.bodyBytes }
        var trailers: ReceivedFields {
            for case .end(let trailers) in events { return trailers }
            return ReceivedFields()
        }
    }

    /// Decodes `responses` on one connection whole and byte by byte, expects the same results,
    /// and returns the whole run's and how many heads it replayed.
    @discardableResult
    private static func checkSameAsScanned(_ responses: [String], heads: [Bool]? = nil,
                                           limits: ResponseParser.Options = ResponseParser.Options.client()) -> (whole: [Decoded], replayed: Int) {
        let (whole, replayed) = decode(responses, heads: heads, limits: limits, bytesPerRead: Int.max)
        let (single, none) = decode(responses, heads: heads, limits: limits, bytesPerRead: 1)
        #expect(none == 0)
        #expect(whole == single)
        return (whole, replayed)
    }

    private static func decode(_ responses: [String], heads: [Bool]?, limits: ResponseParser.Options,
                               bytesPerRead: Int) -> ([Decoded], Int) {
        let decoder = ResponseParser(options: limits)
        var results: [Decoded] = []
        var finalHeads: [ResponseHead] = []
        for (index, response) in responses.enumerated() {
            decoder.expectResponse(toHEAD: heads?[index] ?? false)
            var decoded = Decoded()
            let bytes = Array(response.utf8)
            var start = 0
            do throws(HTTP1ParseError) {
                while start < bytes.count && !decoder.isComplete {
                    let end = min(bytes.count, start &+ bytesPerRead)
                    let consumed = try decoder.feed(Array(bytes[start..<end]), into: &decoded.events).get()
                    start += max(consumed, end - start)
                }
            } catch {
                decoded.failure = error.kind
            }
            decoded.events = decoded.events.mergingBodies
            decoded.keepAlive = decoder.keepAlive
            if let head = decoded.finalHead {
                decoded.templateIndex = head.template.flatMap { template in finalHeads.firstIndex { $0 === template } }
                decoded.dateIndex = head.dateIndex
                finalHeads.append(head)
            }
            results.append(decoded)
            if decoded.failure != nil { break }
        }
        return (results, decoder.replayedHeadCount)
    }
}
