import Foundation
import HTTPTypes
import Testing

@testable import UVHTTP1

/// Heads of one connection that differ only in Date's value share their swift-http-types fields.
@Suite(.tags(.unit)) struct ResponseHeadTemplateTests {
    private static let date1 = "Tue, 24 Nov 2026 15:00:01 GMT"
    private static let date2 = "Tue, 24 Nov 2026 15:00:02 GMT"
    private static let date3 = "Tue, 24 Nov 2026 15:00:03 GMT"

    private static func response(date: String, server: String = "nginx", type: String = "Content-Type: text/plain") -> String {
        "HTTP/1.1 200 OK\r\nServer: \(server)\r\nDate: \(date)\r\n\(type)\r\nContent-Length: 2\r\n\r\nhi"
    }

    @Test func headsDifferingOnlyInDateShareTheFirstHeadsFields() {
        let heads = decodeHeads([Self.response(date: Self.date1), Self.response(date: Self.date2), Self.response(date: Self.date3)])
        #expect(heads.count == 3)
        #expect(heads[0].template == nil)
        #expect(heads[1].template === heads[0])
        // Always the first head: no chain of heads grows on a long-lived connection.
        #expect(heads[2].template === heads[0])
        for (head, date) in zip(heads, [Self.date1, Self.date2, Self.date3]) {
            let fields = head.httpResponse.headerFields
            #expect(fields[.date] == date)
            #expect(fields.map(\.name.rawName) == ["Server", "Date", "Content-Type", "Content-Length"])
            #expect(fields.map(\.value) == ["nginx", date, "text/plain", "2"])
        }
        // The template's own response keeps its own Date after a later head used it.
        #expect(heads[0].httpResponse.headerFields[.date] == Self.date1)
    }

    @Test func headsInTheSameSecondShareOneStorage() {
        let dates = [Self.date1, Self.date1, Self.date1, Self.date2, Self.date2, Self.date1]
        let heads = decodeHeads(dates.map { Self.response(date: $0) })
        #expect(heads.dropFirst().allSatisfy { $0.template === heads[0] })
        let fields = heads.map(\.httpFields)
        for (fields, date) in zip(fields, dates) {
            #expect(fields.map(\.value) == ["nginx", date, "text/plain", "2"])
        }
        // The same second: the very same storage, not a copy with Date replaced.
        #expect(storage(fields[1]) == storage(fields[2]))
        #expect(storage(fields[3]) == storage(fields[4]))
        // A new second builds new fields; the earlier ones keep their Date.
        #expect(storage(fields[2]) != storage(fields[3]))
        #expect(fields[1][.date] == Self.date1)
        // The template's own fields stay its own, whatever its followers carry.
        #expect(storage(fields[0]) != storage(fields[1]))
        #expect(heads[0].httpFields[.date] == Self.date1)
        #expect(heads[5].httpFields[.date] == Self.date1)
    }

    @Test func headsInTheSameSecondShareOneResponseWithTheirStatusLine() {
        let head = "HTTP/1.1 404 Not Here\r\nServer: nginx\r\nDate: %@\r\nContent-Length: 0\r\n\r\n"
        let dates = [Self.date1, Self.date1, Self.date1, Self.date2]
        let heads = decodeHeads(dates.map { head.replacingOccurrences(of: "%@", with: $0) })
        #expect(heads.dropFirst().allSatisfy { $0.template === heads[0] })
        let responses = heads.map(\.httpResponse)
        for (response, date) in zip(responses, dates) {
            #expect(response.status.code == 404)
            #expect(response.status.reasonPhrase == "Not Here")
            #expect(response.headerFields[.date] == date)
        }
        // Within one second the followers get the very same response: its storage too, not a
        // new HTTPResponse around shared fields.
        #expect(bytesOf(responses[1]) == bytesOf(responses[2]))
        #expect(bytesOf(responses[2]) != bytesOf(responses[3]))
    }

    @Test(arguments: [
        response(date: date2, server: "nginy"),                                   // a value
        response(date: date2, type: "content-type: text/plain"),                  // a name's case
        "HTTP/1.1 200 OK\r\nDate: \(date2)\r\nServer: nginx\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nhi", // order
        response(date: date2, type: "Content-Type: text/plain\r\nX-Added: 1"),    // an added field
        response(date: "Tue, 24 Nov 2026 15:00:02 GMT "),                         // Date's value ends elsewhere
        "HTTP/1.1 200 Fine\r\nServer: nginx\r\nDate: \(date2)\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nhi", // reason
    ])
    func headsDifferingInAnyOtherByteDoNotShare(second: String) {
        let heads = decodeHeads([Self.response(date: Self.date1), second])
        #expect(heads.count == 2)
        #expect(heads[1].template == nil)
        #expect(heads[1].httpResponse.headerFields[.date] != Self.date1)
    }

    @Test func aHeadThatDiffersBecomesTheTemplateForTheNext() {
        let heads = decodeHeads([Self.response(date: Self.date1), Self.response(date: Self.date2, server: "other"),
                                 Self.response(date: Self.date3, server: "other")])
        #expect(heads[1].template == nil)
        #expect(heads[2].template === heads[1])
        #expect(heads[2].httpResponse.headerFields[.server] == "other")
        #expect(heads[2].httpResponse.headerFields[.date] == Self.date3)
    }

    @Test func identicalHeadsWithoutDateShare() {
        let plain = "HTTP/1.1 204 No Content\r\nServer: nginx\r\n\r\n"
        let heads = decodeHeads([plain, plain])
        #expect(heads[1].template === heads[0])
        #expect(heads[1].dateIndex == -1)
        #expect(heads[1].httpResponse.headerFields.map(\.value) == ["nginx"])
        #expect(heads[1].httpResponse.status.code == 204)
    }

    @Test func aFoldedHeadIsNeverATemplate() {
        let folded = "HTTP/1.1 200 OK\r\nServer: a\r\n b\r\nContent-Length: 0\r\n\r\n"
        let heads = decodeHeads([folded, folded])
        #expect(heads[1].template == nil)
        #expect(heads[1].httpResponse.headerFields[.server] == "a b")
    }

    @Test func headsResolvedOnManyThreadsAtOnceAgree() async {
        let heads = decodeHeads((0..<32).map { Self.response(date: "Tue, 24 Nov 2026 15:00:\($0 < 10 ? "0" : "")\($0) GMT") })
        #expect(heads.dropFirst().allSatisfy { $0.template === heads[0] })
        let dates = await withTaskGroup(of: (Int, String?).self) { group in
            for (index, head) in heads.enumerated().reversed() {
                group.addTask { (index, head.httpResponse.headerFields[.date]) }
            }
            var dates = [String?](repeating: nil, count: heads.count)
            for await (index, date) in group { dates[index] = date }
            return dates
        }
        #expect(dates == (0..<32).map { "Tue, 24 Nov 2026 15:00:\($0 < 10 ? "0" : "")\($0) GMT" })
    }

    @Test func headsOfFewSecondsResolvedOnManyThreadsAtOnceAgree() async {
        let dates = (0..<64).map { "Tue, 24 Nov 2026 15:00:0\($0 % 3) GMT" }
        let heads = decodeHeads(dates.map { Self.response(date: $0) })
        #expect(heads.dropFirst().allSatisfy { $0.template === heads[0] })
        let resolved = await withTaskGroup(of: (Int, [String]).self) { group in
            for (index, head) in heads.enumerated() {
                group.addTask { (index, head.httpFields.map(\.value)) }
            }
            var resolved = [[String]](repeating: [], count: heads.count)
            for await (index, values) in group { resolved[index] = values }
            return resolved
        }
        #expect(resolved == dates.map { ["nginx", $0, "text/plain", "2"] })
    }
}

/// The address of the fields' storage (HTTPFields holds one array).
private func storage(_ fields: HTTPFields) -> [UInt8] {
    withUnsafeBytes(of: fields) { Array($0) }
}

/// The bytes of a response value: its storage references (equal bytes, the same storage).
private func bytesOf(_ response: HTTPResponse) -> [UInt8] {
    withUnsafeBytes(of: response) { Array($0) }
}

/// Decodes `responses` one after the other on one decoder (one connection), returning the final heads.
private func decodeHeads(_ responses: [String]) -> [ResponseHead] {
    let decoder = ResponseParser(options: .client())
    var heads: [ResponseHead] = []
    for response in responses {
        decoder.expectResponse(toHEAD: false)
        var events: [ResponseEvent] = []
        let bytes = Array(response.utf8)
        let consumed = try? bytes.withUnsafeBytes { try decoder.feed($0, into: &events) }
        #expect(consumed == bytes.count && decoder.isComplete, "\(response.debugDescription)")
        for case .head(let head) in events { heads.append(head) }
    }
    return heads
}
