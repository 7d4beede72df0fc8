// The one error the response decoder throws. The peer broke the protocol (or a limit) in every
// case: misuse of the decoder's API traps instead, so a thrown error is always the remote's doing.

/// Why the response on a connection could not be decoded. After one is thrown the decoder is dead
/// and the connection must be closed.
package struct ResponseDecoderError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The category callers act on (retry, status to report, metrics label).
    package enum Kind: Equatable, Sendable {
        /// llhttp rejected it, or one of our own checks failed.
        case malformed
        /// Head (status line + fields, or trailers) beyond limits.maxHeaderBytes.
        case headersTooLarge
        /// Body beyond limits.maxBodyBytes (also a Content-Length that announces more).
        case bodyTooLarge
        /// EOF inside a Content-Length or chunked body, or inside the head after some bytes.
        case truncatedBody
        /// EOF before any byte of the response (the pool's retry rule depends on this).
        case closedBeforeResponse
        /// 101 or other upgrade: we never asked for one.
        case upgradeRefused
    }

    /// What went wrong, for code.
    package var kind: Kind
    /// What went wrong, for people: llhttp's errno name and reason when llhttp found it.
    package var reason: String

    /// An error of this kind, for this reason.
    package init(kind: Kind, reason: String) {
        self.kind = kind
        self.reason = reason
    }

    /// "kind: reason", for logs.
    package var description: String { "\(kind): \(reason)" }

    /// An error of kind `.malformed`.
    package static func malformed(_ reason: String) -> ResponseDecoderError {
        ResponseDecoderError(kind: .malformed, reason: reason)
    }
}
