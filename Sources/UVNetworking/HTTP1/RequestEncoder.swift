/// Writes an HTTP/1.1 request head (and a small in-memory body) into one buffer, so that the whole
/// request leaves in one write. Every field is checked first: a bad byte means nothing is sent.
enum RequestEncoder {
    enum EncodeError: Error, Equatable {
        case invalidName(String)
        case invalidValue(name: String)
        case invalidMethod(String)
    }

    /// Whether two field names are equal, ASCII case-insensitively (names are tokens, so ASCII;
    /// Foundation's caseInsensitiveCompare costs far more).
    static func sameName(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        return zip(a.utf8, b.utf8).allSatisfy { x, y in x == y || (x | 0x20 == y | 0x20 && (x | 0x20) >= 0x61 && (x | 0x20) <= 0x7A) }
    }

    /// Encodes `method target HTTP/1.1`, Host, the caller's fields, the framing field `framing`
    /// names (see `RequestFraming`), then `body` if it is in memory: as it is under
    /// Content-Length, as one chunk and the last chunk under chunked. A streamed body (`body` nil)
    /// follows the head later, framed by its reader.
    ///
    /// The caller's own Content-Length and Transfer-Encoding fields are left out: `framing` was
    /// decided with them (`RequestFraming.decide`), and the library alone writes framing.
    ///
    /// `defaults` (the session's additional fields) follow the caller's fields, each only when
    /// the caller did not set a field of that name: merged here, while writing, so that a
    /// request costs no merged copy of its fields.
    static func encode(method: String, target: RequestTarget, fields: [(name: String, value: String)],
                       defaults: [(name: String, value: String)] = [], framing: RequestFraming,
                       body: UnsafeRawBufferPointer?) throws(EncodeError) -> [UInt8] {
        guard !method.isEmpty, Self.all(method, isTokenByte) else { throw .invalidMethod(method) }
        var hasHost = false
        var size = method.utf8.count + target.path.utf8.count + target.authority.utf8.count + 64 + (body?.count ?? 0)
        for field in defaults { size += field.name.utf8.count + field.value.utf8.count + 4 }
        for field in fields {
            guard !field.name.isEmpty, Self.all(field.name, isTokenByte) else { throw .invalidName(field.name) }
            guard Self.all(field.value, isValueByte) else { throw .invalidValue(name: field.name) }
            size += field.name.utf8.count + field.value.utf8.count + 4
            if field.name.utf8.count == 4 { hasHost = hasHost || field.name.lowercased() == "host" }
        }

        var out: [UInt8] = []
        out.reserveCapacity(size)
        out.append(contentsOf: method.utf8)
        out.append(0x20)
        out.append(contentsOf: target.path.utf8)
        out.append(contentsOf: " HTTP/1.1\r\n".utf8)
        if !hasHost { appendField(&out, "Host", target.authority) }
        for field in fields where !RequestFraming.isFramingField(field.name) { appendField(&out, field.name, field.value) }
        // Framing and Host are the encoder's own; a session default never sets them.
        for field in defaults where !fields.contains(where: { Self.sameName($0.name, field.name) })
            && !Self.sameName(field.name, "Host") && !RequestFraming.isFramingField(field.name) {
            guard !field.name.isEmpty, Self.all(field.name, isTokenByte) else { throw .invalidName(field.name) }
            guard Self.all(field.value, isValueByte) else { throw .invalidValue(name: field.name) }
            appendField(&out, field.name, field.value)
        }
        switch framing {
        case .none:
            break
        case .contentLength(let length):
            appendField(&out, "Content-Length", String(length))
        case .chunked:
            appendField(&out, "Transfer-Encoding", "chunked")
        }
        out.append(0x0D); out.append(0x0A)
        guard let body else { return out }
        if framing == .chunked {
            // The whole in-memory body as one chunk, then the last chunk and no trailer.
            if body.count > 0 {
                out.append(contentsOf: String(body.count, radix: 16).utf8)
                out.append(0x0D); out.append(0x0A)
                out.append(contentsOf: body)
                out.append(0x0D); out.append(0x0A)
            }
            out.append(contentsOf: "0\r\n\r\n".utf8)
        } else if body.count > 0 {
            out.append(contentsOf: body)
        }
        return out
    }

    private static func appendField(_ out: inout [UInt8], _ name: String, _ value: String) {
        out.append(contentsOf: name.utf8)
        out.append(0x3A); out.append(0x20)
        out.append(contentsOf: value.utf8)
        out.append(0x0D); out.append(0x0A)
    }

    /// tchar (RFC 9110 §5.6.2).
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "-"), UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
             UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
             UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    /// Whether every UTF-8 byte of `text` passes `test`: over the contiguous bytes, which native
    /// strings always have, several times faster than iterating `String.UTF8View`.
    @inline(__always)
    static func all(_ text: String, _ test: (UInt8) -> Bool) -> Bool {
        if let result = text.utf8.withContiguousStorageIfAvailable({ bytes -> Bool in
            for byte in bytes where !test(byte) { return false }
            return true
        }) {
            return result
        }
        return text.utf8.allSatisfy(test)
    }

    /// field-value bytes (RFC 9110 §5.5): visible ASCII, obs-text, SP and HTAB; never CR, LF, NUL
    /// or another control byte.
    static func isValueByte(_ byte: UInt8) -> Bool {
        byte == 0x09 || (byte >= 0x20 && byte != 0x7F)
    }
}
