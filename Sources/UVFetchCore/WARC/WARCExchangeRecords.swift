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
        let response = finalResponse(exchange.response)
        guard !response.isEmpty else { return [] }
        let requestID = WARCRecord.newID(), responseID = WARCRecord.newID()
        var common: [(name: String, value: String)] = [("WARC-Target-URI", exchange.url.absoluteString)]
        if let warcinfoID { common.append(("WARC-Warcinfo-ID", warcinfoID)) }
        if let address = exchange.remoteAddress { common.append(("WARC-IP-Address", address)) }

        var requestFields = common
        requestFields.append(("WARC-Concurrent-To", responseID))
        requestFields.append(("Content-Type", "application/http;msgtype=request"))
        requestFields += payloadFields(exchange.request)
        if exchange.isRequestTruncated { requestFields.append(("WARC-Truncated", "length")) }

        var responseFields = common
        responseFields.append(("WARC-Concurrent-To", requestID))
        responseFields.append(("Content-Type", "application/http;msgtype=response"))
        responseFields += payloadFields(response)
        // "length": the capture's limit; "disconnect": the response did not end as framed.
        if exchange.isResponseTruncated {
            responseFields.append(("WARC-Truncated", "length"))
        } else if !exchange.isComplete {
            responseFields.append(("WARC-Truncated", "disconnect"))
        }
        return [
            WARCRecord(type: "request", id: requestID, date: exchange.startDate, fields: requestFields, block: exchange.request),
            WARCRecord(type: "response", id: responseID, date: exchange.startDate, fields: responseFields, block: response),
        ]
    }

    /// `WARC-Payload-Digest` of an HTTP message: the SHA-1 of what follows its head, as stored
    /// (chunked framing and content coding included), which is what readers recompute. None
    /// when the head itself is incomplete.
    static func payloadFields(_ message: Data) -> [(name: String, value: String)] {
        guard let bodyStart = bodyOffset(message) else { return [] }
        return [("WARC-Payload-Digest", WARCDigest.sha1(message[bodyStart...]))]
    }

    /// `response` from its final head on: each complete 1xx head before it dropped.
    static func finalResponse(_ response: Data) -> Data {
        var rest = response[...]
        // "HTTP/1.1 1xx": the status code's first digit is the tenth byte.
        while rest.count > 9, rest[rest.startIndex + 9] == UInt8(ascii: "1"), rest.starts(with: Data("HTTP/".utf8)),
              let end = bodyOffset(rest) {
            rest = rest[end...]
        }
        return rest.startIndex == response.startIndex ? response : Data(rest)
    }

    /// Where the body starts: after the first empty line (CRLF CRLF), or nil.
    static func bodyOffset(_ message: Data) -> Data.Index? {
        let separator = Data([0x0D, 0x0A, 0x0D, 0x0A])
        return message.range(of: separator)?.upperBound
    }
}
