import UVHTTP1

/// A request prepared in HTTP/1.1 form, as an HTTP/2 header block (RFC 9113 §8.3.1): the
/// session checks and encodes every request once, in HTTP/1.1 form, whatever connection it will
/// take; an HTTP/2 stream translates that head here, byte by byte. The bytes come from our own
/// encoder, so the layout is known: a request line, fields, an empty line, then the body if it
/// went with the head.
enum HTTP2RequestHead {
    /// The header block and where the body starts in `request` (tests).
    struct Translated {
        var fields: [(name: String, value: String)]
        var bodyStart: Int
    }

    /// Translates `request`'s head for a stream to `scheme` (tests; streams use `translate(_:scheme:into:)`).
    static func translate(_ request: [UInt8], scheme: String) throws(HTTP2Error) -> Translated {
        let block = HTTP2HeaderBlock()
        let bodyStart = try translate(request, scheme: scheme, into: block)
        return Translated(fields: block.fields, bodyStart: bodyStart)
    }

    /// Translates `request`'s head into `block` (emptied first): the pseudo-fields, then the
    /// fields with lowercase names, less those HTTP/2 forbids. Returns where the body starts.
    static func translate(_ request: [UInt8], scheme: String, into block: HTTP2HeaderBlock) throws(HTTP2Error) -> Int {
        block.removeAll()
        // String.withUTF8 rethrows untyped errors: the Result carries the typed one across it.
        let outcome: Result<Int, HTTP2Error> = request.withUnsafeBufferPointer { head in
            var scheme = scheme
            return scheme.withUTF8 { scheme in
                do throws(HTTP2Error) {
                    return .success(try translate(head, scheme: scheme, into: block))
                } catch {
                    return .failure(error)
                }
            }
        }
        return try outcome.get()
    }

    private static func translate(_ request: UnsafeBufferPointer<UInt8>, scheme: UnsafeBufferPointer<UInt8>,
                                  into block: HTTP2HeaderBlock) throws(HTTP2Error) -> Int {
        guard let lineEnd = lineEnd(request, from: 0) else { throw .unsupportedRequest("the request has no complete head") }
        // METHOD SP TARGET SP VERSION
        guard let firstSpace = index(of: 0x20, in: request, from: 0, to: lineEnd),
              let secondSpace = index(of: 0x20, in: request, from: firstSpace + 1, to: lineEnd),
              index(of: 0x20, in: request, from: secondSpace + 1, to: lineEnd) == nil else {
            throw .unsupportedRequest("the request line is not METHOD TARGET VERSION")
        }
        let method = slice(request, 0, firstSpace)
        // Methods are case-sensitive (RFC 9110 §9.1).
        let isConnect = method.elementsEqual("CONNECT".utf8)
        block.append(name: ":method", value: method)
        if !isConnect {
            block.append(name: ":scheme", value: scheme)
            block.append(name: ":path", value: slice(request, firstSpace + 1, secondSpace))
        }
        var authority: UnsafeBufferPointer<UInt8>?
        var position = lineEnd + 2
        while true {
            guard let end = Self.lineEnd(request, from: position) else { throw .unsupportedRequest("the request has no complete head") }
            if end == position { break }
            guard let colon = index(of: 0x3A, in: request, from: position, to: end) else { throw .unsupportedRequest("a field line has no colon") }
            var valueStart = colon + 1, valueEnd = end
            while valueStart < valueEnd, request[valueStart] == 0x20 || request[valueStart] == 0x09 { valueStart += 1 }
            while valueEnd > valueStart, request[valueEnd - 1] == 0x20 || request[valueEnd - 1] == 0x09 { valueEnd -= 1 }
            let name = slice(request, position, colon), value = slice(request, valueStart, valueEnd)
            position = end + 2
            if equalsIgnoringCase(name, "host") {
                authority = value
                continue
            }
            if isConnectionSpecific(name) { continue }
            // TE may only say "trailers" over HTTP/2.
            if equalsIgnoringCase(name, "te") && !equalsIgnoringCase(value, "trailers") { continue }
            block.append(lowercasing: name, value: value)
        }
        guard let authority else { throw .unsupportedRequest("the request has no Host field") }
        // :authority goes among the pseudo-fields, which come before every field (§8.3).
        block.append(name: ":authority", value: authority)
        block.moveLast(to: isConnect ? 1 : 2)
        return position + 2
    }

    private static func slice(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: bytes[start..<end])
    }

    private static func index(of byte: UInt8, in bytes: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int) -> Int? {
        var index = start
        while index < end {
            if bytes[index] == byte { return index }
            index += 1
        }
        return nil
    }

    /// Fields that describe an HTTP/1.1 connection, which HTTP/2 forbids (RFC 9113 §8.2.2); Host
    /// becomes :authority.
    private static func isConnectionSpecific(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        switch name.count {
        case 7: return equalsIgnoringCase(name, "upgrade")
        case 10: return equalsIgnoringCase(name, "connection") || equalsIgnoringCase(name, "keep-alive")
        case 16: return equalsIgnoringCase(name, "proxy-connection")
        case 17: return equalsIgnoringCase(name, "transfer-encoding")
        default: return false
        }
    }

    /// Whether `bytes` spell `lowercase` in any case (ASCII).
    private static func equalsIgnoringCase(_ bytes: UnsafeBufferPointer<UInt8>, _ lowercase: StaticString) -> Bool {
        guard bytes.count == lowercase.utf8CodeUnitCount else { return false }
        let expected = lowercase.utf8Start
        var offset = 0
        for byte in bytes {
            let folded = byte &- 0x41 < 26 ? byte | 0x20 : byte
            if folded != expected[offset] { return false }
            offset += 1
        }
        return true
    }

    /// Where the CRLF after `start` begins.
    private static func lineEnd(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        var index = start
        while index + 1 < bytes.count {
            if bytes[index] == 0x0D && bytes[index + 1] == 0x0A { return index }
            index += 1
        }
        return nil
    }
}
