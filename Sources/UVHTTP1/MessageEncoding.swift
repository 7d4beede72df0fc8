// What the public request and response encoders share: the checks of field sections and the
// writing of fields and bodies. The client's own request path (`RequestEncoder.encode(method:
// target:authority:fields:defaults:framing:body:)`) has its fast checks and does not come here.

/// Checks and writes the parts both kinds of message have.
enum MessageEncoding {
    /// Whether `value` can be sent as a field value that a recipient reads back unchanged:
    /// field-value bytes only (RFC 9110 §5.5), and no whitespace at either end, which every
    /// recipient strips.
    static func isValue(_ value: String) -> Bool {
        guard RequestEncoder.all(value, RequestEncoder.isValueByte) else { return false }
        guard let first = value.utf8.first, let last = value.utf8.last else { return true }
        return !isWhitespace(first) && !isWhitespace(last)
    }

    /// Whether every byte of `text` is visible ASCII: a request target or an authority.
    static func isVisibleASCII(_ text: String) -> Bool {
        RequestEncoder.all(text) { $0 > 0x20 && $0 < 0x7F }
    }

    /// Whether `name` is Content-Length or Transfer-Encoding, whose values the body decides.
    static func isFramingField(_ name: String) -> Bool {
        RequestFraming.isFramingField(name)
    }

    /// Checks every field's name and value, `section` ("field" or "trailer") naming them in the
    /// error.
    static func check(_ fields: [HeaderField], section: String) throws(HTTP1EncodeError) {
        for field in fields {
            guard !field.name.isEmpty, RequestEncoder.all(field.name, RequestEncoder.isTokenByte) else {
                throw HTTP1EncodeError(.invalidFieldName, "\(section) name \(field.name.debugDescription) is not a token")
            }
            guard isValue(field.value) else {
                throw HTTP1EncodeError(.invalidFieldValue, "\(section) \(field.name)'s value \(field.value.debugDescription) has a control byte or whitespace at an end")
            }
        }
    }

    /// Checks trailers: fields, none of them a framing field (RFC 9110 §6.5.1).
    static func checkTrailers(_ trailers: [HeaderField]) throws(HTTP1EncodeError) {
        try check(trailers, section: "trailer")
        if let framing = trailers.first(where: { isFramingField($0.name) }) {
            throw HTTP1EncodeError(.invalidFraming, "\(framing.name) cannot be a trailer: it frames the message")
        }
    }

    /// Bytes a message of these parts needs, to reserve once.
    static func size(_ fields: [HeaderField], _ pieces: [[UInt8]]) -> Int {
        fields.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 } + pieces.reduce(0) { $0 + $1.count + 12 } + 64
    }

    /// `name: value\r\n` for each field.
    static func append(_ out: inout [UInt8], _ fields: [HeaderField]) {
        for field in fields { RequestEncoder.appendField(&out, field.name, field.value) }
    }

    /// Each non-empty piece as a chunk (an empty one would be the last chunk), then the last
    /// chunk, the trailers and the empty line ending the message.
    static func appendChunked(_ out: inout [UInt8], _ pieces: [[UInt8]], trailers: [HeaderField]) {
        for piece in pieces where !piece.isEmpty {
            out.append(contentsOf: String(piece.count, radix: 16).utf8)
            out.append(0x0D); out.append(0x0A)
            out.append(contentsOf: piece)
            out.append(0x0D); out.append(0x0A)
        }
        out.append(0x30); out.append(0x0D); out.append(0x0A)
        append(&out, trailers)
        out.append(0x0D); out.append(0x0A)
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }
}
