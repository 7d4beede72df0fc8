/// Writes an HTTP/1.1 request head (and a small in-memory body) into one buffer, so that the whole
/// request leaves in one write. Every field is checked first: a bad byte means nothing is sent.
///
/// For harnesses, test clients and tools: `encode(method:target:authority:fields:body:)`
/// (RequestEncoder+Public.swift). The client's own path, below, decides framing with
/// `RequestFraming` and merges the session's default fields while writing.
public enum RequestEncoder {
    package enum EncodeError: Error, Equatable {
        case invalidName(String)
        case invalidValue(name: String)
        case invalidMethod(String)
        /// The caller's fields name Host more than once: a server must answer such a request
        /// with 400 (RFC 9112 §3.2), and which one was meant cannot be guessed.
        case repeatedHost
    }

    /// Whether two field names are equal, ASCII case-insensitively (names are tokens, so ASCII;
    /// Foundation's caseInsensitiveCompare costs far more). Over the contiguous UTF-8 bytes,
    /// which native strings always have.
    package static func sameName(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        let fast = a.utf8.withContiguousStorageIfAvailable { x in
            b.utf8.withContiguousStorageIfAvailable { y in
                for index in 0..<x.count where !sameByte(x[index], y[index]) { return false }
                return true
            }
        }
        if let fast, let result = fast { return result }
        return zip(a.utf8, b.utf8).allSatisfy(sameByte)
    }

    @inline(__always)
    private static func sameByte(_ x: UInt8, _ y: UInt8) -> Bool {
        x == y || (x | 0x20 == y | 0x20 && (x | 0x20) >= 0x61 && (x | 0x20) <= 0x7A)
    }

    /// `encode` with the defaults as a list (checked and encoded for this one request).
    package static func encode(method: String, target: String, authority: String, fields: [(name: String, value: String)],
                       defaults: [(name: String, value: String)], framing: RequestFraming,
                       body: UnsafeRawBufferPointer?) throws(EncodeError) -> [UInt8] {
        try encode(method: method, target: target, authority: authority, fields: fields, defaults: EncodedFields(defaults),
                   framing: framing, body: body)
    }

    /// Encodes `method target HTTP/1.1`, Host (`authority`, unless the caller's fields have
    /// one; two are refused), the caller's fields, the framing field `framing` names (see
    /// `RequestFraming`), then `body` if it is in memory: as it is under Content-Length, as one
    /// chunk and the last chunk under chunked. A streamed body (`body` nil) follows the head
    /// later, framed by its reader.
    ///
    /// The caller's own Content-Length and Transfer-Encoding fields are left out: `framing` was
    /// decided with them (`RequestFraming.decide`), and the library alone writes framing.
    ///
    /// `defaults` (the session's additional fields, encoded once) follow the caller's fields,
    /// each only when the caller did not set a field of that name: merged here, while writing,
    /// so that a request costs no merged copy of its fields. When the caller names none of them
    /// their bytes are copied whole.
    package static func encode(method: String, target: String, authority: String, fields: [(name: String, value: String)],
                       defaults: EncodedFields = .empty, framing: RequestFraming,
                       body: UnsafeRawBufferPointer?) throws(EncodeError) -> [UInt8] {
        var end = 0
        return try encode(method: method, target: target, authority: authority, fields: fields, defaults: defaults,
                          framing: framing, body: body, marking: fields.count, at: &end)
    }

    /// `encode(method:target:authority:fields:defaults:framing:body:)`, also setting `mark` to
    /// the offset just after the first `markedFields` of `fields` (after Host when that is 0):
    /// where a field added after them would have gone, for a caller that reuses the bytes with
    /// one more field (a tracer's `traceparent`) instead of encoding them again.
    package static func encode(method: String, target: String, authority: String, fields: [(name: String, value: String)],
                       defaults: EncodedFields = .empty, framing: RequestFraming,
                       body: UnsafeRawBufferPointer?, marking markedFields: Int, at mark: inout Int) throws(EncodeError) -> [UInt8] {
        guard !method.isEmpty, Self.all(method, isTokenByte) else { throw .invalidMethod(method) }
        var hasHost = false
        // Whether a caller's field shares its name with a default: the defaults then go one by one.
        var overridesDefault = false
        var size = method.utf8.count + target.utf8.count + authority.utf8.count + 64 + (body?.count ?? 0)
            + defaults.bytes.count
        for field in fields {
            guard !field.name.isEmpty, Self.all(field.name, isTokenByte) else { throw .invalidName(field.name) }
            guard Self.all(field.value, isValueByte) else { throw .invalidValue(name: field.name) }
            size += field.name.utf8.count + field.value.utf8.count + 4
            if field.name.utf8.count == 4 && sameName(field.name, "Host") {
                guard !hasHost else { throw .repeatedHost }
                hasHost = true
            }
            if !overridesDefault && !defaults.isEmpty { overridesDefault = defaults.contains(name: field.name) }
        }

        var out: [UInt8] = []
        out.reserveCapacity(size)
        append(&out, method)
        out.append(0x20)
        append(&out, target)
        append(&out, " HTTP/1.1\r\n")
        if !hasHost { appendField(&out, "Host", authority) }
        mark = out.count
        for (index, field) in fields.enumerated() {
            if !RequestFraming.isFramingField(field.name) { appendField(&out, field.name, field.value) }
            if index < markedFields { mark = out.count }
        }
        if defaults.isPlain && !overridesDefault {
            out.append(contentsOf: defaults.bytes)
        } else {
            // Framing and Host are the encoder's own; a session default never sets them.
            for field in defaults.fields where !field.isReserved && !fields.contains(where: { Self.sameName($0.name, field.name) }) {
                if let error = field.error { throw error }
                out.append(contentsOf: defaults.bytes[field.range])
            }
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
                append(&out, String(body.count, radix: 16))
                out.append(0x0D); out.append(0x0A)
                out.append(contentsOf: body)
                out.append(0x0D); out.append(0x0A)
            }
            append(&out, "0\r\n\r\n")
        } else if body.count > 0 {
            out.append(contentsOf: body)
        }
        return out
    }

    /// `name: value\r\n`.
    package static func appendField(_ out: inout [UInt8], _ name: String, _ value: String) {
        append(&out, name)
        out.append(0x3A); out.append(0x20)
        append(&out, value)
        out.append(0x0D); out.append(0x0A)
    }

    /// `text`'s UTF-8 bytes, copied from its contiguous storage (a generic append of a UTF8View
    /// goes byte by byte).
    @inline(__always)
    private static func append(_ out: inout [UInt8], _ text: String) {
        if text.utf8.withContiguousStorageIfAvailable({ out.append(contentsOf: $0) }) == nil {
            out.append(contentsOf: text.utf8)
        }
    }

    /// tchar (RFC 9110 §5.6.2).
    package static func isTokenByte(_ byte: UInt8) -> Bool {
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
    package static func all(_ text: String, _ test: (UInt8) -> Bool) -> Bool {
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
    package static func isValueByte(_ byte: UInt8) -> Bool {
        byte == 0x09 || (byte >= 0x20 && byte != 0x7F)
    }
}
