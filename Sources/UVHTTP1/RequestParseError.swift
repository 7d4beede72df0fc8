// The one error the request parser throws. The input broke the protocol (or a limit) in every
// case: misuse of the parser's API traps instead. It has the response side's shape (kind, reason,
// offset) so that the two can become one type.

/// Why a request could not be parsed, and where in the stream. After one is thrown the parser is
/// dead: every later call throws the same error.
public struct RequestParseError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The category callers act on (which status a server answers with, metrics label).
    public enum Kind: Equatable, Hashable, Sendable {
        /// Not HTTP/1.1 as RFC 9112 and the parser's options allow: llhttp refused it, or one of
        /// the parser's own checks did (a server answers 400).
        case malformed
        /// A head (request line, fields and the empty line) or a trailer section longer than
        /// `RequestParser.Options.maxHeaderBytes` (a server answers 431).
        case headersTooLarge
        /// A request target longer than `RequestParser.Options.maxTargetBytes` (a server
        /// answers 414).
        case targetTooLong
        /// A body longer than `RequestParser.Options.maxBodyBytes`, or a Content-Length that
        /// announces one (a server answers 413).
        case bodyTooLarge
        /// The stream ended inside a request: in its head, its body or its trailers.
        case truncatedBody
    }

    /// What went wrong, for code.
    public var kind: Kind
    /// What went wrong, for people, in plain words (llhttp's reason when llhttp found it).
    public var reason: String
    /// llhttp's errno name when llhttp found the problem ("HPE_INVALID_METHOD"), for matching
    /// on in a harness or grouping in logs; nil when one of the parser's own checks did.
    public var llhttpCode: String?
    /// Where it went wrong: the offset, in the bytes fed to the parser since it was created (only
    /// those it consumed), of the byte at which the problem was found; for an error at the end of
    /// the stream (`finish`), the stream's length. The same however the stream was split.
    public var offset: Int

    /// An error of this kind, for this reason, found at `offset` (by llhttp when `llhttpCode`).
    package init(kind: Kind, reason: String, offset: Int, llhttpCode: String? = nil) {
        self.kind = kind
        self.reason = reason
        self.offset = offset
        self.llhttpCode = llhttpCode
    }

    /// "kind at offset: reason", for logs.
    public var description: String { "\(kind) at byte \(offset): \(reason)" }
}
