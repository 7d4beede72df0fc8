// The one error the HTTP/1.1 parsers throw. The peer broke the protocol (or a limit) in every
// case: misuse of a parser's API traps instead, so a thrown error is always the input's doing.

/// Why a message could not be parsed, and where in the stream. After one is thrown the parser is
/// dead: every later call throws the same error (and, on a connection, it must be closed).
public struct HTTP1ParseError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The category callers act on (retry, status to report, metrics label).
    public enum Kind: Equatable, Hashable, Sendable {
        /// Not HTTP/1.1 as RFC 9112 and the parser's options allow: llhttp refused it, or one of
        /// the parser's own checks did.
        case malformed
        /// A head (start line and fields, each interim head counted on its own) or a trailer
        /// section longer than `ResponseParser.Options.maxHeaderBytes`.
        case headersTooLarge
        /// A body longer than `ResponseParser.Options.maxBodyBytes`, or a Content-Length that
        /// announces one.
        case bodyTooLarge
        /// The stream ended inside a message: in its head, its Content-Length or chunked body,
        /// its trailers, or right after an interim response.
        case truncatedBody
        /// The stream ended before any byte of the message.
        case closedBeforeResponse
        /// A 101 or another protocol switch, which a response parser never asked for.
        case upgradeRefused
    }

    /// What went wrong, for code.
    public var kind: Kind
    /// What went wrong, for people, in plain words (llhttp's reason when llhttp found it).
    public var reason: String
    /// llhttp's errno name when llhttp found the problem ("HPE_INVALID_HEADER_TOKEN"), for
    /// matching on in a harness or grouping in logs; nil when one of the parser's own checks did.
    public var llhttpCode: String?
    /// Where it went wrong: the offset, in the bytes fed to the parser since it was created (only
    /// those it consumed, see `ResponseParser.feed(_:to:)`), of the byte at which the problem was
    /// found; for a problem with a whole head (its framing, a protocol switch, a Content-Length
    /// over the body limit), the first byte after the head; for an error at the end of the
    /// stream (`finish`), the stream's length. The same however the stream was split into feeds.
    public var offset: Int

    /// An error of this kind, for this reason, found at `offset` (by llhttp when `llhttpCode`).
    package init(kind: Kind, reason: String, offset: Int = 0, llhttpCode: String? = nil) {
        self.kind = kind
        self.reason = reason
        self.offset = offset
        self.llhttpCode = llhttpCode
    }

    /// "kind: reason", for logs.
    public var description: String { "\(kind): \(reason)" }

    /// An error of kind `.malformed`.
    package static func malformed(_ reason: String, llhttpCode: String? = nil) -> HTTP1ParseError {
        HTTP1ParseError(kind: .malformed, reason: reason, llhttpCode: llhttpCode)
    }
}
