// Writes HTTP/1.1 responses, for test servers and harnesses: the counterpart of ResponseParser.
// Everything is checked before a byte is written, so an accepted response reads back, through a
// strict parser, exactly as it was described.

/// Encodes one HTTP/1.x response (status line, fields, framing and body) into one buffer.
public enum ResponseEncoder {
    /// The version the status line names.
    public enum Version: Equatable, Sendable {
        /// `HTTP/1.0`: no chunked framing (RFC 9112 §6.1); the connection closes after the
        /// response unless a field says keep-alive.
        case http1_0
        /// `HTTP/1.1`.
        case http1_1
    }

    /// A response body and the framing that carries it (RFC 9112 §6.3).
    public enum Body: Equatable, Sendable {
        /// No body, and no framing field of the encoder's own: for a 1xx, 204 or 304 response
        /// and for a response to HEAD. Only here may `fields` carry a Content-Length (one, a
        /// decimal): the length a GET would have had, for a HEAD or 304 response.
        case none
        /// These bytes, after `Content-Length: <count>`.
        case contentLength([UInt8])
        /// `Transfer-Encoding: chunked` (HTTP/1.1 only): each non-empty piece as one chunk (an
        /// empty chunk would end the body), then the last chunk and `trailers`.
        case chunked([[UInt8]], trailers: [HeaderField] = [])
        /// These bytes with no framing field: the body ends when the server closes the
        /// connection (RFC 9112 §6.3, rule 8), so the connection cannot be kept alive.
        case untilClose([UInt8])
    }

    /// Encodes `HTTP/1.x status reason`, `fields` in order, the framing field `body` calls for,
    /// then the body.
    ///
    /// Refused, with nothing encoded, when a part cannot be sent as given: a status outside
    /// 100...999; a reason with a control byte other than HTAB; a field name that is not a
    /// token; a field value with a control byte other than HTAB or whitespace at either end; a
    /// Transfer-Encoding field, or a Content-Length field unless `body` is `.none` (the body
    /// decides the framing); a body or a Content-Length for 1xx, 204 (and a body for 304);
    /// chunked framing for HTTP/1.0; the same checks for trailers, and no framing field among
    /// them. Fields are sent as given otherwise, duplicates included.
    ///
    /// - Parameters:
    ///   - version: HTTP/1.1 unless said otherwise.
    ///   - status: The status code, 100...999.
    ///   - reason: The reason phrase, possibly empty (RFC 9112 §4: clients ignore it).
    ///   - fields: The header fields, in the order they are sent.
    ///   - body: The body and its framing.
    /// - Returns: The response's bytes.
    public static func encode(version: Version = .http1_1, status: Int, reason: String, fields: [HeaderField] = [],
                              body: Body = .none) throws(HTTP1EncodeError) -> [UInt8] {
        guard (100...999).contains(status) else {
            throw HTTP1EncodeError(.invalidStatus, "status \(status) is not three digits from 100 to 999")
        }
        guard RequestEncoder.all(reason, { $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }) else {
            throw HTTP1EncodeError(.invalidReason, "reason \(reason.debugDescription) has a control byte")
        }
        try MessageEncoding.check(fields, section: "field")
        try checkFraming(version: version, status: status, fields: fields, body: body)
        var pieces: [[UInt8]] = []
        switch body {
        case .none: break
        case .contentLength(let bytes), .untilClose(let bytes): pieces = [bytes]
        case .chunked(let chunks, let trailers):
            try MessageEncoding.checkTrailers(trailers)
            pieces = chunks
        }

        var out: [UInt8] = []
        out.reserveCapacity(reason.utf8.count + MessageEncoding.size(fields, pieces))
        out.append(contentsOf: (version == .http1_0 ? "HTTP/1.0 " : "HTTP/1.1 ").utf8)
        out.append(contentsOf: String(status).utf8)
        out.append(0x20)
        out.append(contentsOf: reason.utf8)
        out.append(0x0D); out.append(0x0A)
        MessageEncoding.append(&out, fields)
        switch body {
        case .none:
            out.append(0x0D); out.append(0x0A)
        case .contentLength(let bytes):
            RequestEncoder.appendField(&out, "Content-Length", String(bytes.count))
            out.append(0x0D); out.append(0x0A)
            out.append(contentsOf: bytes)
        case .chunked(let chunks, let trailers):
            RequestEncoder.appendField(&out, "Transfer-Encoding", "chunked")
            out.append(0x0D); out.append(0x0A)
            MessageEncoding.appendChunked(&out, chunks, trailers: trailers)
        case .untilClose(let bytes):
            out.append(0x0D); out.append(0x0A)
            out.append(contentsOf: bytes)
        }
        return out
    }

    /// Whether the fields, the status and the version allow `body`'s framing.
    private static func checkFraming(version: Version, status: Int, fields: [HeaderField], body: Body) throws(HTTP1EncodeError) {
        // 1xx and 204 have no content and no Content-Length (RFC 9110 §8.6); 304 has no
        // content but may say the length of the representation (§15.4.5).
        let noContent = status < 200 || status == 204 || status == 304
        if noContent && body != .none {
            throw HTTP1EncodeError(.bodyNotAllowed, "a \(status) response has no body")
        }
        if version == .http1_0, case .chunked = body {
            throw HTTP1EncodeError(.invalidFraming, "chunked framing in an HTTP/1.0 response (RFC 9112 §6.1)")
        }
        var lengths = 0
        for field in fields where MessageEncoding.isFramingField(field.name) {
            guard body == .none, field.name.utf8.count == 14 else {
                throw HTTP1EncodeError(.invalidFraming, "\(field.name) is written by the encoder, from the body")
            }
            guard status >= 200 && status != 204 else {
                throw HTTP1EncodeError(.bodyNotAllowed, "a \(status) response has no Content-Length")
            }
            lengths += 1
            guard lengths == 1, isLength(field.value) else {
                throw HTTP1EncodeError(.invalidFraming, "Content-Length must be one decimal length, not \(field.value.debugDescription)")
            }
        }
    }

    /// 1*DIGIT (RFC 9110 §8.6), at most 18 digits so that every reader's integer holds it.
    private static func isLength(_ value: String) -> Bool {
        !value.isEmpty && value.utf8.count <= 18 && value.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }
}
