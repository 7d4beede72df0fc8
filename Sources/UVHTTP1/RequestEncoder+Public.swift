// The request encoder as anyone can call it: a whole message described by values, checked, then
// written. The client keeps its own entry point (RequestEncoder.swift), which takes its framing
// from `RequestFraming` and its body as a buffer, with no extra copy.

extension RequestEncoder {
    /// A request body and the framing that carries it (RFC 9112 §6).
    public enum Body: Equatable, Sendable {
        /// No body and no framing field (GET, HEAD, DELETE...). A POST with an empty body is
        /// `.contentLength([])`, which says `Content-Length: 0`.
        case none
        /// These bytes, after `Content-Length: <count>`.
        case contentLength([UInt8])
        /// `Transfer-Encoding: chunked`: each non-empty piece as one chunk (empty pieces are
        /// skipped, since an empty chunk ends the body), then the last chunk and `trailers`.
        case chunked([[UInt8]], trailers: [HeaderField] = [])
    }

    /// Encodes a whole HTTP/1.1 request: `method target HTTP/1.1`, `Host: authority` (when
    /// `authority` is not nil), `fields` in order, the framing field `body` calls for, then the
    /// body.
    ///
    /// Refused, with nothing encoded, when a part cannot be sent as given: a method that is not
    /// a token; an empty target or one with a byte other than visible ASCII; an authority with
    /// such a byte; a field name that is not a token; a field value with a control byte other
    /// than HTAB or whitespace at either end; a Content-Length or Transfer-Encoding field (the
    /// body decides the framing) or, with an authority, a Host field; the same for trailers,
    /// and a framing field among them. Fields are sent as given otherwise, duplicates included.
    ///
    /// - Parameters:
    ///   - method: The method, a token such as `GET`.
    ///   - target: The request target: origin form (`/path?query`), absolute form
    ///     (`http://host/path`, to a proxy), authority form (CONNECT) or `*` (OPTIONS).
    ///   - authority: The Host field's value (RFC 9112 §3.2), possibly empty; nil to write no
    ///     Host field of the encoder's own (then `fields` may carry one).
    ///   - fields: The header fields, in the order they are sent.
    ///   - body: The body and its framing.
    /// - Returns: The request's bytes.
    public static func encode(method: String, target: String, authority: String?, fields: [HeaderField] = [],
                              body: Body = .none) throws(HTTP1EncodeError) -> [UInt8] {
        guard !method.isEmpty, all(method, isTokenByte) else {
            throw HTTP1EncodeError(.invalidMethod, "method \(method.debugDescription) is not a token")
        }
        guard !target.isEmpty, MessageEncoding.isVisibleASCII(target) else {
            throw HTTP1EncodeError(.invalidTarget, "target \(target.debugDescription) is empty or has a byte other than visible ASCII")
        }
        if let authority, !MessageEncoding.isVisibleASCII(authority) {
            throw HTTP1EncodeError(.invalidAuthority, "authority \(authority.debugDescription) has a byte other than visible ASCII")
        }
        try MessageEncoding.check(fields, section: "field")
        if let framing = fields.first(where: { MessageEncoding.isFramingField($0.name) }) {
            throw HTTP1EncodeError(.invalidFraming, "\(framing.name) is written by the encoder, from the body")
        }
        if authority != nil, let host = fields.first(where: { sameName($0.name, "Host") }) {
            throw HTTP1EncodeError(.invalidFraming, "\(host.name) given with an authority: a request has one Host field")
        }
        var pieces: [[UInt8]] = []
        switch body {
        case .none: break
        case .contentLength(let bytes): pieces = [bytes]
        case .chunked(let chunks, let trailers):
            try MessageEncoding.checkTrailers(trailers)
            pieces = chunks
        }

        var out: [UInt8] = []
        out.reserveCapacity(method.utf8.count + target.utf8.count + (authority?.utf8.count ?? 0)
            + MessageEncoding.size(fields, pieces))
        out.append(contentsOf: method.utf8)
        out.append(0x20)
        out.append(contentsOf: target.utf8)
        out.append(contentsOf: " HTTP/1.1\r\n".utf8)
        if let authority { appendField(&out, "Host", authority) }
        MessageEncoding.append(&out, fields)
        switch body {
        case .none:
            out.append(0x0D); out.append(0x0A)
        case .contentLength(let bytes):
            appendField(&out, "Content-Length", String(bytes.count))
            out.append(0x0D); out.append(0x0A)
            out.append(contentsOf: bytes)
        case .chunked(let chunks, let trailers):
            appendField(&out, "Transfer-Encoding", "chunked")
            out.append(0x0D); out.append(0x0A)
            MessageEncoding.appendChunked(&out, chunks, trailers: trailers)
        }
        return out
    }
}
