// The one error the HTTP/1.1 encoders throw: the message described cannot be sent as HTTP/1.1,
// so nothing is encoded (a bad byte in a field would otherwise split the message or smuggle
// another one).

/// Why `RequestEncoder` or `ResponseEncoder` refused to encode a message.
public struct HTTP1EncodeError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The part of the message at fault.
    public enum Kind: Equatable, Hashable, Sendable {
        /// The method is empty or not a token (RFC 9110 §9.1).
        case invalidMethod
        /// The request target is empty or has a byte other than visible ASCII (RFC 9112 §3.2):
        /// a space, a control byte or a non-ASCII byte would change where the target ends.
        case invalidTarget
        /// The authority (the Host value) has a byte other than visible ASCII (RFC 9112 §3.2).
        case invalidAuthority
        /// The status code is outside 100...999 (three digits, RFC 9110 §15).
        case invalidStatus
        /// The reason phrase has a control byte other than HTAB (RFC 9112 §4).
        case invalidReason
        /// A field name is empty or not a token (RFC 9110 §5.1).
        case invalidFieldName
        /// A field value has CR, LF, NUL or another control byte other than HTAB, or begins
        /// or ends with whitespace, which a recipient strips (RFC 9110 §5.5).
        case invalidFieldValue
        /// A field contradicts the framing the body gives: Transfer-Encoding or
        /// Content-Length among the fields or trailers (the encoder writes them from the body),
        /// a Host field besides the authority, or chunked framing in an HTTP/1.0 message
        /// (RFC 9112 §6.1).
        case invalidFraming
        /// A body, or a length, for a status whose responses have none: 1xx, 204 and 304
        /// (RFC 9110 §6.4.1, §8.6).
        case bodyNotAllowed
    }

    /// What was wrong, for code.
    public var kind: Kind
    /// What was wrong, for people: the part at fault and why.
    public var reason: String

    /// An error of this kind, for this reason.
    package init(_ kind: Kind, _ reason: String) {
        self.kind = kind
        self.reason = reason
    }

    /// "kind: reason", for logs.
    public var description: String { "\(kind): \(reason)" }
}
