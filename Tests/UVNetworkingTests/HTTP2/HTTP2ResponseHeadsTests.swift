import Testing
@testable import UVNetworking
import UVHTTP1

/// How an HTTP/2 connection makes its response heads: a template, then heads that repeat it
/// with another Date, reused once their tasks let go of them.
@Suite(.tags(.unit)) struct HTTP2ResponseHeadsTests {
    private func block(date: String = "Thu, 03 Dec 2026 06:30:54 GMT", server: String = "s") -> HTTP2HeaderBlock {
        HTTP2HeaderBlock([("server", server), ("date", date), ("content-length", "12")])
    }

    private func value(_ head: ResponseHead, _ name: StaticString) -> String? { head.headers.firstValue(named: name) }

    @Test func aHeadRepeatingTheTemplateNamesItAndIsReusedOnceLetGo() {
        let heads = HTTP2ResponseHeads()
        let template = heads.head(status: 200, block: block(), streams: 100)
        #expect(template.template == nil)
        #expect(heads.template === template)

        var follower: ResponseHead? = heads.head(status: 200, block: block(date: "Thu, 03 Dec 2026 06:30:55 GMT"), streams: 100)
        #expect(follower?.template === template)
        #expect(follower?.dateIndex == 1)
        #expect(value(follower!, "date") == "Thu, 03 Dec 2026 06:30:55 GMT")
        let firstFollower = ObjectIdentifier(follower!)
        follower = nil

        // Its task let go of it: the same object comes back, its Date rewritten, nothing else.
        let reused = heads.head(status: 200, block: block(date: "Thu, 03 Dec 2026 06:30:56 GMT"), streams: 100)
        #expect(ObjectIdentifier(reused) == firstFollower)
        #expect(reused.headers == block(date: "Thu, 03 Dec 2026 06:30:56 GMT").receivedFields)
        #expect(reused.httpResponse.headerFields[.date] == "Thu, 03 Dec 2026 06:30:56 GMT")
        // The template is never written over.
        #expect(value(template, "date") == "Thu, 03 Dec 2026 06:30:54 GMT")
    }

    @Test func aHeadStillHeldIsNeverWrittenOver() {
        let heads = HTTP2ResponseHeads()
        _ = heads.head(status: 200, block: block(), streams: 100)
        let held = heads.head(status: 200, block: block(date: "Thu, 03 Dec 2026 06:30:55 GMT"), streams: 100)
        let next = heads.head(status: 200, block: block(date: "Thu, 03 Dec 2026 06:30:56 GMT"), streams: 100)
        #expect(next !== held)
        #expect(next.template === held.template)
        #expect(value(held, "date") == "Thu, 03 Dec 2026 06:30:55 GMT")
        #expect(value(next, "date") == "Thu, 03 Dec 2026 06:30:56 GMT")
        #expect(heads.keptCount == 2)
    }

    @Test func anotherHeadBecomesTheTemplateAndTheKeptHeadsGo() {
        let heads = HTTP2ResponseHeads()
        let first = heads.head(status: 200, block: block(), streams: 100)
        _ = heads.head(status: 200, block: block(), streams: 100)
        #expect(heads.keptCount == 1)
        let other = heads.head(status: 200, block: block(server: "t"), streams: 100)
        #expect(other.template == nil && heads.template === other && other !== first)
        #expect(heads.keptCount == 0)
        // Another status is another head too.
        let notFound = heads.head(status: 404, block: block(server: "t"), streams: 100)
        #expect(notFound.template == nil && notFound.status == 404)
    }

    /// The same bytes cut into other fields, or a Date of another length, are not repeats.
    @Test func onlyTheSameFieldsWithAnotherDateRepeat() {
        let template = HTTP2ResponseHeads().head(status: 200, block: block(), streams: 1)
        let date = block().known.date
        #expect(HTTP2ResponseHeads.block(block(date: "Fri, 04 Dec 2026 00:00:00 GMT"), repeats: template, dateIndex: date))
        #expect(!HTTP2ResponseHeads.block(block(date: "Fri, 4 Dec 2026 00:00:00 GMT"), repeats: template, dateIndex: date))
        #expect(!HTTP2ResponseHeads.block(block(server: "x"), repeats: template, dateIndex: date))
        let recut = HTTP2HeaderBlock([("serverd", "ate"), ("", "Thu, 03 Dec 2026 06:30:54 GMT"), ("content-length", "12")])
        #expect(!HTTP2ResponseHeads.block(recut, repeats: template, dateIndex: 1))
        // No Date at all: every byte counts.
        let plain = HTTP2ResponseHeads().head(status: 200, block: HTTP2HeaderBlock([("a", "b")]), streams: 1)
        #expect(HTTP2ResponseHeads.block(HTTP2HeaderBlock([("a", "b")]), repeats: plain, dateIndex: -1))
        #expect(!HTTP2ResponseHeads.block(HTTP2HeaderBlock([("a", "c")]), repeats: plain, dateIndex: -1))
        // No field: a repeat of a template with none.
        let empty = HTTP2ResponseHeads().head(status: 204, block: HTTP2HeaderBlock([]), streams: 1)
        #expect(HTTP2ResponseHeads.block(HTTP2HeaderBlock([]), repeats: empty, dateIndex: -1))
    }

    /// Heads all still held: the ring stops growing at its bound, and an idle connection's trim
    /// lets go of it.
    @Test func theKeptHeadsAreBoundedAndTrimmed() {
        let heads = HTTP2ResponseHeads()
        var held: [ResponseHead] = []
        for _ in 0..<(HTTP2ResponseHeads.maximumKept + 40) { held.append(heads.head(status: 200, block: block(), streams: 100)) }
        #expect(heads.keptCount == HTTP2ResponseHeads.maximumKept)
        heads.trim()
        #expect(heads.keptCount == 0)
        #expect(held.count == HTTP2ResponseHeads.maximumKept + 40)
    }

    /// One stream at a time: however often a completion lags behind the next response, the ring
    /// keeps a few heads, not a busy connection's worth.
    @Test func aConnectionRunningOneStreamKeepsFewHeads() {
        let heads = HTTP2ResponseHeads()
        var held: [ResponseHead] = []
        for _ in 0..<50 { held.append(heads.head(status: 200, block: block(), streams: 1)) }
        #expect(heads.keptCount == 4)
        #expect(Set(held.map(ObjectIdentifier.init)).count == 50)
    }
}
