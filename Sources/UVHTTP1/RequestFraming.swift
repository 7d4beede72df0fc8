/// How a request body is delimited on the wire (RFC 9112 §6). The library alone decides it, from
/// the body; the caller's own `Content-Length` and `Transfer-Encoding` fields are checked against
/// the body and never sent as given, so no field can make the server read a body of another
/// length than the one sent (which would desynchronise the keep-alive connection: the rest of
/// the body would be read as the next request).
///
/// The rules (see `decide`):
/// - No framing field from the caller: `Content-Length` for a body of known length (and an empty
///   one for POST, PUT and PATCH, RFC 9110 §8.6), chunked for a stream of unknown length,
///   nothing for no body.
/// - The caller's `Content-Length` must equal the body's length (every value, when the field is
///   repeated or a list); it is then sent once. For a stream of unknown length it gives the
///   length, which the stream must then produce exactly.
/// - The caller's `Transfer-Encoding: chunked` sends any body chunked, as curl does: an in-memory
///   body as one chunk, a stream of known length chunk by chunk (its length is then not
///   checked), no body as the empty chunked body. No other transfer coding is applied by the
///   library, so any other value (`gzip`, `identity`, `gzip, chunked`) is refused. "chunked" is
///   compared as ASCII, case-insensitively.
/// - `Content-Length` and `Transfer-Encoding` together are refused (RFC 9112 §6.2).
package enum RequestFraming: Equatable, Sendable {
    /// No framing field and no body.
    case none
    /// `Content-Length` with this many body bytes.
    case contentLength(Int64)
    /// `Transfer-Encoding: chunked`.
    case chunked

    /// What the request's body is, as far as framing is concerned.
    package enum Body: Equatable, Sendable {
        /// No body at all.
        case none
        /// An in-memory body of this many bytes.
        case data(Int)
        /// A streamed body, with its declared length if it has one.
        case stream(length: Int64?)
    }

    /// Why a caller's framing field cannot be honoured; the request fails before any byte is sent.
    package struct Conflict: Error, Equatable, Sendable {
        package let reason: String
    }

    /// The framing for `body`, given the caller's `fields` and the request's `method`. Throws
    /// when a caller's framing field is malformed or contradicts the body.
    package static func decide(method: String, body: Body, fields: [(name: String, value: String)]) throws(Conflict) -> RequestFraming {
        var callerLength: Int64?
        var codings: [Substring] = []
        for field in fields {
            if isContentLength(field.name) {
                for member in field.value.split(separator: ",", omittingEmptySubsequences: false) {
                    guard let value = decimal(trimmed(member)) else {
                        throw Conflict(reason: "Content-Length \"\(field.value)\" is not a length")
                    }
                    if let callerLength, callerLength != value {
                        throw Conflict(reason: "Content-Length is given twice with different values (\(callerLength) and \(value))")
                    }
                    callerLength = value
                }
            } else if isTransferEncoding(field.name) {
                codings += field.value.split(separator: ",").map(trimmed).filter { !$0.isEmpty }
            }
        }
        let hasTransferEncoding = fields.contains { isTransferEncoding($0.name) }
        if hasTransferEncoding {
            // ASCII case only: under Unicode case mapping the Kelvin sign (U+212A) is a "k".
            guard codings.count == 1, RequestEncoder.sameName(String(codings[0]), "chunked") else {
                let given = codings.joined(separator: ", ")
                throw Conflict(reason: "Transfer-Encoding \"\(given)\" cannot be sent: the only transfer coding applied to a request body is chunked (compress the body yourself and set Content-Encoding)")
            }
            if callerLength != nil {
                throw Conflict(reason: "Content-Length and Transfer-Encoding cannot be sent together (RFC 9112 §6.2)")
            }
            return .chunked
        }
        if let callerLength {
            let actual: Int64?
            switch body {
            case .none: actual = 0
            case .data(let count): actual = Int64(count)
            case .stream(let length): actual = length
            }
            // A stream of unknown length takes the caller's length (and must then produce it).
            guard actual == nil || actual == callerLength else {
                let what = body == .none ? "the request has no body" : "the body has \(actual!) bytes"
                throw Conflict(reason: "Content-Length \(callerLength) does not match the body: \(what)")
            }
            return .contentLength(callerLength)
        }
        switch body {
        case .none:
            return methodDefinesBody(method) ? .contentLength(0) : .none
        case .data(let count):
            return count > 0 || methodDefinesBody(method) ? .contentLength(Int64(count)) : .none
        case .stream(let length):
            return length.map(RequestFraming.contentLength) ?? .chunked
        }
    }

    /// Whether `name` is Content-Length or Transfer-Encoding: the fields only the library writes.
    @inline(__always)
    package static func isFramingField(_ name: String) -> Bool {
        isContentLength(name) || isTransferEncoding(name)
    }

    @inline(__always)
    private static func isContentLength(_ name: String) -> Bool {
        name.utf8.count == 14 && RequestEncoder.sameName(name, "Content-Length")
    }

    @inline(__always)
    private static func isTransferEncoding(_ name: String) -> Bool {
        name.utf8.count == 17 && RequestEncoder.sameName(name, "Transfer-Encoding")
    }

    /// RFC 9110 §8.6: a user agent sends Content-Length when the method defines a meaning for a
    /// body, even an empty one.
    private static func methodDefinesBody(_ method: String) -> Bool {
        method == "POST" || method == "PUT" || method == "PATCH"
    }

    private static func trimmed(_ text: Substring) -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let start = text.firstIndex(where: { !isSpace($0) }) else { return "" }
        return text[start...text.lastIndex(where: { !isSpace($0) })!]
    }

    /// 1*DIGIT (RFC 9110 §8.6) that fits an Int64; Int64's own parser would also take "+5".
    private static func decimal(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.utf8.count <= 18, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int64(text)
    }
}
