import Foundation
import Testing
@testable import UVNetworking

/// Which requests may be pipelined: those that ask for it, are idempotent, and send their body
/// with their head; and the request serializer's setting.
@Suite(.tags(.unit)) struct PreparedRequestPipeliningTests {
    private func mayPipeline(_ method: HTTPRequest.Method, body: Data? = nil, asks: Bool = true,
                             fields: [(String, String)] = [], stream: Bool = false) throws -> Bool {
        var request = Request(url: URL(string: "http://h/p")!, method: method, body: body)
        request.httpShouldUsePipelining = asks
        for (name, value) in fields { request.addValue(value, forHTTPHeaderField: name) }
        if stream { request.bodyStream = StreamedBody(length: 3) { DataBodyStream(Data("abc".utf8)) } }
        return try PreparedRequest(request, additionalFields: []).mayPipeline
    }

    @Test func idempotentRequestsThatAskArePipelined() throws {
        for method: HTTPRequest.Method in [.get, .head, .options, .trace, .delete] { #expect(try mayPipeline(method)) }
        #expect(try mayPipeline(.put, body: Data("small".utf8)))
    }

    @Test func othersAreNot() throws {
        #expect(try !mayPipeline(.get, asks: false))
        #expect(try !mayPipeline(.post, body: Data("a".utf8)))
        #expect(try !mayPipeline(.patch, body: Data("a".utf8)))
        // A body that follows its head in chunks, or waits for 100 Continue.
        #expect(try !mayPipeline(.put, stream: true))
        #expect(try !mayPipeline(.put, body: Data("a".utf8), fields: [("Expect", "100-continue")]))
        #expect(try !mayPipeline(.put, body: Data(count: PreparedRequest.largestBodyInOneWrite + 1)))
    }

    @Test func requestsThatDifferOnlyThereAreNotEqual() {
        let plain = Request(url: URL(string: "http://h/")!)
        var pipelined = plain
        pipelined.httpShouldUsePipelining = true
        #expect(plain != pipelined)
        pipelined.httpShouldUsePipelining = false
        #expect(plain == pipelined)
    }

    @Test func theSerializerGivesItsSettingToItsRequests() throws {
        let serializer = HTTPRequestSerializer()
        #expect(try !serializer.request(method: .get, urlString: "http://h/", parameters: nil).httpShouldUsePipelining)
        serializer.httpShouldUsePipelining = true
        #expect(try serializer.request(method: .get, urlString: "http://h/", parameters: nil).httpShouldUsePipelining)
        var own = Request(url: URL(string: "http://h/")!)
        own.httpShouldUsePipelining = true
        serializer.httpShouldUsePipelining = nil
        #expect(serializer.applyingDefaults(to: own).httpShouldUsePipelining)
    }
}
