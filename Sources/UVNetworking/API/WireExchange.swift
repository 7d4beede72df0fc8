import Foundation

/// One HTTP exchange as it crossed the wire, recorded by a `WireCapture`: the request as
/// written and the response as read, above TLS (plaintext) and below every decoding, so a
/// chunked body is still chunked and a gzip body still compressed. An archive (WARC) stores
/// these bytes as they are.
///
/// An HTTP/2 exchange (`protocolName` "h2") is recorded in HTTP/1.1 form, as web archives keep
/// it: the request as the session prepared it, the response as a status line and fields
/// followed by the DATA frames' payload (content coding kept); frames and HPACK are not kept.
///
/// A task has one exchange per request it sent: a redirect followed, or a request sent again
/// after a reused connection turned out closed, adds one.
public struct WireExchange: Sendable {
    /// The URL the request was sent to (where redirects led, for a redirect's exchange).
    public let url: URL
    /// The address of the peer the bytes went to, without its port (`127.0.0.1`, `::1`): the
    /// server's, or the proxy's when the request went through one. nil if it was not known.
    public let remoteAddress: String?
    /// When the connection was handed the request, just before its first byte was written.
    public let startDate: Date
    /// The protocol the exchange spoke, by its ALPN name: "http/1.1" or "h2".
    public internal(set) var protocolName = "http/1.1"
    /// The request as written: its head and body, with the body's transfer coding.
    public internal(set) var request = Data()
    /// The response as read: status line, fields and body with its transfer and content
    /// codings (1xx interim heads included). Empty when no byte of a response arrived.
    public internal(set) var response = Data()
    /// Whether request bytes were left out because `WireCapture.limit` was reached.
    public internal(set) var isRequestTruncated = false
    /// Whether response bytes were left out because `WireCapture.limit` was reached.
    public internal(set) var isResponseTruncated = false
    /// Whether the response ended as its framing said (false for an exchange that failed, was
    /// abandoned, or got no response).
    public internal(set) var isComplete = false

    init(url: URL, remoteAddress: String?, startDate: Date) {
        self.url = url
        self.remoteAddress = remoteAddress
        self.startDate = startDate
    }

    mutating func appendRequest(_ bytes: UnsafeRawBufferPointer, limit: Int) {
        Self.append(bytes, to: &request, truncated: &isRequestTruncated, limit: limit)
    }

    mutating func appendResponse(_ bytes: UnsafeRawBufferPointer, limit: Int) {
        Self.append(bytes, to: &response, truncated: &isResponseTruncated, limit: limit)
    }

    /// Appends what fits under `limit`; the rest is left out and `truncated` set.
    private static func append(_ bytes: UnsafeRawBufferPointer, to data: inout Data, truncated: inout Bool, limit: Int) {
        let room = limit - data.count
        if bytes.count > room { truncated = true }
        let kept = min(bytes.count, max(0, room))
        if kept > 0 { data.append(bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), count: kept) }
    }
}
