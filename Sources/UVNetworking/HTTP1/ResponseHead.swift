// What the HTTP/1.1 response decoder hands to the connection: heads, body bytes and the end.
// Only the standard library is used here so that the fuzz harness can compile these files alone.

/// One header or trailer field as received (obs-fold already replaced by a space).
///
/// The name keeps the peer's spelling (compare it case-insensitively). The value has its leading
/// and trailing whitespace removed. Both are decoded as UTF-8; a byte that is not valid UTF-8
/// (obs-text) becomes U+FFFD, which is why a field must never be re-serialised from this form.
struct HeaderField: Equatable, Sendable {
    var name: String
    var value: String
}

/// A response head as it came off the wire.
struct ResponseHead: Equatable, Sendable {
    /// Always 1: the decoder rejects any other major version.
    var versionMajor: Int
    /// 0 or 1 (llhttp rejects HTTP/1.2 and later).
    var versionMinor: Int
    /// Three digits, 100...999. Codes 600...999 are passed through: RFC 9110 §15 asks a client to
    /// treat them as 5xx, a policy decision left to the caller.
    var status: Int
    /// The reason phrase, possibly empty; RFC 9112 §4 says a client should ignore it.
    var reason: String
    /// The fields in the order received, duplicates kept.
    var headers: [HeaderField]
    /// llhttp_should_keep_alive() at headers-complete: false for HTTP/1.0 without keep-alive, Connection: close, EOF-framed bodies.
    var keepAlive: Bool
}

/// What the decoder produced from the bytes it was fed, in wire order.
///
/// One response is `informational* head body* end`; an error can cut that sequence short.
enum ResponseEvent: Equatable, Sendable {
    /// 1xx other than 101; the decoder then waits for the final response.
    case informational(ResponseHead)
    /// The final response head.
    case head(ResponseHead)
    /// Consecutive body bytes of one feed merged into one event (never empty).
    case body([UInt8])
    /// The final response is complete; `trailers` is empty unless a chunked body carried some.
    case end(trailers: [HeaderField])
}
