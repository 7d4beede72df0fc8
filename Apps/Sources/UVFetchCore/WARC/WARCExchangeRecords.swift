import Foundation
import UVNetworking

/// The `request` and `response` records of one exchange (`WireExchange`), each naming the other
/// (`WARC-Concurrent-To`) and the file's `warcinfo` record.
///
/// An exchange that got no byte of a response (a connect that failed, a reused connection found
/// closed, whose request the library then sent again as an exchange of its own) makes no
/// records: a request record alone would say a request reached a server that may never have
/// read it.
///
/// Interim responses (`100 Continue`, which a request with `Expect: 100-continue` gets) are
/// left out of the response record: it starts at the final status line, which is what readers
/// take the record's status and payload from.
enum WARCExchangeRecords {
    /// The two records, request first, or none.
    static func records(for exchange: WireExchange, warcinfoID: String?) -> [WARCRecord] {
        scannedRecords(for: exchange, warcinfoID: warcinfoID).records
    }

    /// The two records (or none) and what the scan of the response found, for the writer's
    /// deduplication.
    /// `responseID`: the response record's ID, when the caller gave it out already (a URL's
    /// record names the capture of its final response).
    static func scannedRecords(for exchange: WireExchange, warcinfoID: String?,
                               responseID: String? = nil) -> (records: [WARCRecord], scan: ResponsePayloadScan) {
        // Where the client's parser saw the final head (after any interim ones), its end, and
        // the payload's digest.
        let bounds = ResponsePayloadScan(exchange.response, toHEAD: exchange.request.starts(with: Self.head))
        let response = bounds.finalHeadStart == 0 ? exchange.response : Data(exchange.response.dropFirst(bounds.finalHeadStart))
        guard !response.isEmpty else { return ([], bounds) }
        let requestID = WARCRecord.newID(), responseID = responseID ?? WARCRecord.newID()
        var common: [(name: String, value: String)] = [("WARC-Target-URI", exchange.url.absoluteString)]
        if let warcinfoID { common.append(("WARC-Warcinfo-ID", warcinfoID)) }
        if let address = exchange.remoteAddress { common.append(("WARC-IP-Address", address)) }
        // An HTTP/2 exchange is stored in HTTP/1.1 form, marked as web archives mark it.
        if exchange.protocolName == "h2" { common.append(("WARC-Protocol", "h2")) }

        var requestFields = common
        requestFields.append(("WARC-Concurrent-To", responseID))
        requestFields.append(("Content-Type", "application/http;msgtype=request"))
        requestFields += requestPayloadFields(exchange.request)
        if exchange.isRequestTruncated { requestFields.append(("WARC-Truncated", "length")) }

        var responseFields = common
        responseFields.append(("WARC-Concurrent-To", requestID))
        responseFields.append(("Content-Type", "application/http;msgtype=response"))
        // The payload: the body without its transfer encoding (chunks joined), content coding
        // kept; none when the head itself is incomplete.
        if let digest = bounds.payloadDigest { responseFields.append(("WARC-Payload-Digest", digest)) }
        // "length": the capture's limit; "disconnect": the response did not end as framed.
        if exchange.isResponseTruncated {
            responseFields.append(("WARC-Truncated", "length"))
        } else if !exchange.isComplete {
            responseFields.append(("WARC-Truncated", "disconnect"))
        }
        return ([
            WARCRecord(type: "request", id: requestID, date: exchange.startDate, fields: requestFields, block: exchange.request),
            WARCRecord(type: "response", id: responseID, date: exchange.startDate, fields: responseFields, block: response),
        ], bounds)
    }

    /// The profile of a revisit whose payload is one archived before (WARC 1.1 §6.7.2).
    static let identicalPayloadProfile = "http://netpreserve.org/warc/1.1/revisits/identical-payload-digest"
    /// The profile of a revisit that is a 304 to a conditional request (WARC 1.1 §6.7.3).
    static let serverNotModifiedProfile = "http://netpreserve.org/warc/1.1/revisits/server-not-modified"

    /// The earlier record a revisit refers to.
    struct Original: Equatable, Sendable {
        var id: String
        var targetURI: String
        /// Its WARC-Date, as written.
        var date: String
    }

    /// `response` (a 304 of `records(for:)`) as a `revisit` of `original`, the capture the
    /// conditional request's validators came from (WARC 1.1 §6.7.3): the same ID, fields and
    /// block (the 304's head, which is all it has).
    static func notModifiedRevisit(of response: WARCRecord, original: Original) -> WARCRecord {
        var fields = response.fields
        fields.append(("WARC-Profile", serverNotModifiedProfile))
        fields.append(("WARC-Refers-To", original.id))
        fields.append(("WARC-Refers-To-Target-URI", original.targetURI))
        fields.append(("WARC-Refers-To-Date", original.date))
        return WARCRecord(type: "revisit", id: response.id, date: response.date, fields: fields, block: response.block)
    }

    /// `response` (a record of `records(for:)`) as a `revisit` of `original`, whose payload
    /// is the same: the same ID, fields and HTTP head, without the payload, which readers take
    /// from the original (WARC 1.1 §6.7.2). `headEnd` is where the head ends in the block.
    static func revisit(of response: WARCRecord, headEnd: Int, original: Original) -> WARCRecord {
        var fields = response.fields
        fields.append(("WARC-Profile", identicalPayloadProfile))
        fields.append(("WARC-Refers-To", original.id))
        fields.append(("WARC-Refers-To-Target-URI", original.targetURI))
        fields.append(("WARC-Refers-To-Date", original.date))
        return WARCRecord(type: "revisit", id: response.id, date: response.date, fields: fields,
                          block: Data(response.block.prefix(headEnd)))
    }

    /// How a HEAD request starts: its response has no body, whatever its head says.
    private static let head = Data("HEAD ".utf8)

    /// `WARC-Payload-Digest` of a request: the SHA-1 of its body, chunked framing removed
    /// (`RequestPayloadScan`). None when the head itself is incomplete.
    static func requestPayloadFields(_ request: Data) -> [(name: String, value: String)] {
        guard let digest = RequestPayloadScan.digest(request) else { return [] }
        return [("WARC-Payload-Digest", digest)]
    }
}
