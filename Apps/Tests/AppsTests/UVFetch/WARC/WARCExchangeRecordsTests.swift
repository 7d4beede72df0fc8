import Foundation
import Testing
@testable import UVFetchCore
@testable import UVNetworking

/// An exchange as a capture would have recorded it.
func makeExchange(url: String = "http://127.0.0.1:8080/a", request: String = "GET /a HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n",
                  response: Data, complete: Bool = true, responseTruncated: Bool = false) -> WireExchange {
    var exchange = WireExchange(url: URL(string: url)!, remoteAddress: "127.0.0.1", startDate: Date())
    exchange.request = Data(request.utf8)
    exchange.response = response
    exchange.isComplete = complete
    exchange.isResponseTruncated = responseTruncated
    return exchange
}

@Suite(.tags(.loopback)) struct WARCExchangeRecordsTests {
    private func value(_ name: String, in record: WARCRecord) -> String? {
        record.fields.first { $0.name == name }?.value
    }

    @Test func requestAndResponseNameEachOtherTheirTargetAndTheirWarcinfo() throws {
        let response = Data("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc".utf8)
        let records = WARCExchangeRecords.records(for: makeExchange(response: response), warcinfoID: "<urn:uuid:info>")
        try #require(records.count == 2)
        let (request, reply) = (records[0], records[1])
        #expect(request.type == "request" && reply.type == "response")
        #expect(value("WARC-Concurrent-To", in: request) == reply.id)
        #expect(value("WARC-Concurrent-To", in: reply) == request.id)
        for record in records {
            #expect(value("WARC-Target-URI", in: record) == "http://127.0.0.1:8080/a")
            #expect(value("WARC-IP-Address", in: record) == "127.0.0.1")
            #expect(value("WARC-Warcinfo-ID", in: record) == "<urn:uuid:info>")
            #expect(value("WARC-Truncated", in: record) == nil)
        }
        #expect(value("Content-Type", in: request) == "application/http;msgtype=request")
        #expect(value("Content-Type", in: reply) == "application/http;msgtype=response")
        #expect(reply.block == response)
        // The payload is what follows the head: "abc"; a request without a body has an empty one.
        #expect(value("WARC-Payload-Digest", in: reply) == "sha1:VGMT4NSHA2AWVOR6EVYXQUGCNSONBWE5")
        #expect(value("WARC-Payload-Digest", in: request) == "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ")
    }

    @Test func noResponseMeansNoRecords() {
        #expect(WARCExchangeRecords.records(for: makeExchange(response: Data()), warcinfoID: nil).isEmpty)
    }

    @Test func truncationIsSaid() throws {
        let head = Data("HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\nab".utf8)
        let cut = WARCExchangeRecords.records(for: makeExchange(response: head, responseTruncated: true), warcinfoID: nil)
        #expect(cut.last.flatMap { value("WARC-Truncated", in: $0) } == "length")
        let broken = WARCExchangeRecords.records(for: makeExchange(response: head, complete: false), warcinfoID: nil)
        #expect(broken.last.flatMap { value("WARC-Truncated", in: $0) } == "disconnect")
        #expect(broken.first.flatMap { value("WARC-Truncated", in: $0) } == nil)
    }

    @Test func aHeadCutShortHasNoPayloadDigest() throws {
        let records = WARCExchangeRecords.records(for: makeExchange(response: Data("HTTP/1.1 200 OK\r\nCont".utf8), complete: false),
                                                  warcinfoID: nil)
        #expect(records.last.flatMap { value("WARC-Payload-Digest", in: $0) } == nil)
        #expect(records.last.map { $0.fields.contains { $0.name == "WARC-Payload-Digest" } } == false)
    }

    @Test func interimResponsesAreLeftOut() throws {
        let final = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc"
        let received = Data(("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n" + final).utf8)
        let records = WARCExchangeRecords.records(for: makeExchange(response: received), warcinfoID: nil)
        #expect(records.last?.block == Data(final.utf8))
        #expect(records.last.flatMap { value("WARC-Payload-Digest", in: $0) } == "sha1:VGMT4NSHA2AWVOR6EVYXQUGCNSONBWE5")
        // A 1xx alone (the final head never came) leaves no response, so no records.
        let interimOnly = Data("HTTP/1.1 100 Continue\r\n\r\n".utf8)
        #expect(WARCExchangeRecords.records(for: makeExchange(response: interimOnly), warcinfoID: nil).isEmpty)
        #expect(ResponseHeadBounds(Data(final.utf8)) == ResponseHeadBounds(finalHeadStart: 0, bodyStart: final.utf8.count - 3))
    }

    /// A head whose lines end in bare LFs, which the client accepts: the payload starts after
    /// its empty line, not at a CRLF CRLF that the body happens to hold (the old byte search
    /// took the digest from there, and `warcio check` failed).
    @Test func aBareLFHeadEndsWhereTheParserSaysSo() throws {
        let body = "ab\r\n\r\ncd"
        let received = Data(("HTTP/1.1 200 OK\nContent-Length: \(body.utf8.count)\nX-A: 1\n\n" + body).utf8)
        let records = WARCExchangeRecords.records(for: makeExchange(response: received), warcinfoID: nil)
        #expect(records.last?.block == received)
        #expect(records.last.flatMap { value("WARC-Payload-Digest", in: $0) } == WARCDigest.sha1(Data(body.utf8)))
        // Mixed line ends, and an interim head with a bare LF before a CRLF final head.
        let mixed = Data(("HTTP/1.1 100 Continue\n\r\nHTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\n\r\n" + body).utf8)
        let bounds = ResponseHeadBounds(mixed)
        #expect(bounds.finalHeadStart == "HTTP/1.1 100 Continue\n\r\n".utf8.count)
        #expect(bounds.bodyStart == mixed.count - body.utf8.count)
        // A head the client refuses (no status line) has no payload digest.
        #expect(ResponseHeadBounds(Data("garbage\n\nmore".utf8)).bodyStart == nil)
    }
}
