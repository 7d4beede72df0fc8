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

    /// A streamed upload goes out chunked: its payload digest is the body's, whatever the
    /// chunks (WARC 1.1 §6.3.2), while the record keeps the bytes as sent.
    @Test func aChunkedRequestIsDigestedWithoutItsFraming() throws {
        let response = Data("HTTP/1.1 204 No Content\r\n\r\n".utf8)
        func requestRecord(_ request: String) throws -> WARCRecord {
            let records = WARCExchangeRecords.records(for: makeExchange(request: request, response: response), warcinfoID: nil)
            try #require(records.count == 2)
            return records[0]
        }
        let head = "POST /a HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
        let whole = try requestRecord(head + "3\r\nabc\r\n0\r\n\r\n")
        let split = try requestRecord(head + "1\r\na\r\n2;ext=1\r\nbc\r\n0\r\n\r\n")
        let sized = try requestRecord("POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc")
        for record in [whole, split, sized] {
            #expect(value("WARC-Payload-Digest", in: record) == "sha1:VGMT4NSHA2AWVOR6EVYXQUGCNSONBWE5")
        }
        #expect(split.block == Data((head + "1\r\na\r\n2;ext=1\r\nbc\r\n0\r\n\r\n").utf8))
        // Cut short (a capture limit, a failed write): the digest of the body that came.
        let cut = try requestRecord(head + "1\r\na\r\n2\r\n")
        #expect(value("WARC-Payload-Digest", in: cut) == "sha1:Q336IN72UWT7ZYK5DXOLT2XK5I3XMZ5Y")
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
        let scan = ResponsePayloadScan(Data(final.utf8))
        #expect(scan.finalHeadStart == 0 && scan.bodyStart == final.utf8.count - 3 && scan.status == 200)
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
        let bounds = ResponsePayloadScan(mixed)
        #expect(bounds.finalHeadStart == "HTTP/1.1 100 Continue\n\r\n".utf8.count)
        #expect(bounds.bodyStart == mixed.count - body.utf8.count)
        // A head the client refuses (no status line) has no payload digest.
        #expect(ResponsePayloadScan(Data("garbage\n\nmore".utf8)).bodyStart == nil)
    }

    /// WARC 1.1 §6.3.2: the payload is the body with its transfer encoding removed and its
    /// content encoding kept. The same content in other chunks has the same digest; a gzip
    /// body keeps its gzip bytes.
    @Test func thePayloadDigestIsOfTheBodyWithoutItsChunking() throws {
        let content = "hello, archive"
        let whole = Data("HTTP/1.1 200 OK\r\nContent-Length: \(content.utf8.count)\r\n\r\n\(content)".utf8)
        let oneChunk = Data("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\ne\r\n\(content)\r\n0\r\n\r\n".utf8)
        let threeChunks = Data(("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                                + "5\r\nhello\r\n2;ext=1\r\n, \r\n7\r\narchive\r\n0\r\nX-Trailer: t\r\n\r\n").utf8)
        let expected = WARCDigest.sha1(Data(content.utf8))
        for response in [whole, oneChunk, threeChunks] {
            let records = WARCExchangeRecords.records(for: makeExchange(response: response), warcinfoID: nil)
            #expect(records.last.flatMap { value("WARC-Payload-Digest", in: $0) } == expected)
            // The block is still the response as it crossed the wire.
            #expect(records.last?.block == response)
        }
        let gzip = Data([0x1f, 0x8b, 0x08, 0x00, 0x01, 0x02])
        var coded = Data("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n6\r\n".utf8)
        coded += gzip + Data("\r\n0\r\n\r\n".utf8)
        let codedRecords = WARCExchangeRecords.records(for: makeExchange(response: coded), warcinfoID: nil)
        #expect(codedRecords.last.flatMap { value("WARC-Payload-Digest", in: $0) } == WARCDigest.sha1(gzip))
        // A body cut short: the digest covers what came, without the framing.
        let cut = Data("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n9\r\nabc".utf8)
        let cutRecords = WARCExchangeRecords.records(for: makeExchange(response: cut, complete: false), warcinfoID: nil)
        #expect(cutRecords.last.flatMap { value("WARC-Payload-Digest", in: $0) } == WARCDigest.sha1(Data("helloabc".utf8)))
        // The response to a HEAD has no payload, whatever its Content-Length says.
        let headResponse = Data("HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n".utf8)
        let headRecords = WARCExchangeRecords.records(
            for: makeExchange(request: "HEAD /a HTTP/1.1\r\nHost: h\r\n\r\n", response: headResponse), warcinfoID: nil)
        #expect(headRecords.last.flatMap { value("WARC-Payload-Digest", in: $0) } == WARCDigest.sha1(Data()))
    }
}
