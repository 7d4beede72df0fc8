/// A request prepared in HTTP/1.1 form, as an HTTP/2 header block (RFC 9113 §8.3.1): the
/// session checks and encodes every request once, in HTTP/1.1 form, whatever connection it will
/// take; an HTTP/2 stream translates that head here. The bytes come from our own encoder, so
/// the layout is known: a request line, fields, an empty line, then the body if it went with
/// the head.
enum HTTP2RequestHead {
    /// The header block and where the body starts in `request`.
    struct Translated {
        var fields: [(name: String, value: String)]
        var bodyStart: Int
    }

    /// Fields that describe an HTTP/1.1 connection, which HTTP/2 forbids (RFC 9113 §8.2.2).
    private static let connectionSpecific: Set<String> = ["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "host"]

    /// Translates `request`'s head for a stream to `scheme`.
    static func translate(_ request: [UInt8], scheme: String) throws(HTTP2Error) -> Translated {
        var lines: [Substring] = []
        var position = 0
        var bodyStart = -1
        // Lines up to the empty one.
        while position < request.count {
            guard let end = lineEnd(request, from: position) else { break }
            if end == position {
                bodyStart = end + 2
                break
            }
            lines.append(Substring(decoding: request[position..<end], as: UTF8.self))
            position = end + 2
        }
        guard bodyStart >= 0, let requestLine = lines.first else { throw .unsupportedRequest("the request has no complete head") }
        let parts = requestLine.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .unsupportedRequest("the request line is not METHOD TARGET VERSION") }
        let method = String(parts[0]), target = String(parts[1])
        var authority: String?
        var fields: [(name: String, value: String)] = []
        fields.reserveCapacity(lines.count + 3)
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { throw .unsupportedRequest("a field line has no colon") }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingSpaces()
            if name == "host" { authority = value }
            if connectionSpecific.contains(name) { continue }
            // TE may only say "trailers" over HTTP/2.
            if name == "te" && value.lowercased() != "trailers" { continue }
            fields.append((name, value))
        }
        guard let authority else { throw .unsupportedRequest("the request has no Host field") }
        var block: [(name: String, value: String)] = [(":method", method), (":scheme", scheme), (":authority", authority), (":path", target)]
        if method == "CONNECT" { block = [(":method", method), (":authority", authority)] }
        block.append(contentsOf: fields)
        return Translated(fields: block, bodyStart: bodyStart)
    }

    private static func lineEnd(_ bytes: [UInt8], from start: Int) -> Int? {
        var index = start
        while index + 1 < bytes.count {
            if bytes[index] == 0x0D && bytes[index + 1] == 0x0A { return index }
            index += 1
        }
        return nil
    }
}

private extension Substring {
    func trimmingSpaces() -> String {
        var slice = self[...]
        while let first = slice.first, first == " " || first == "\t" { slice = slice.dropFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice = slice.dropLast() }
        return String(slice)
    }
}
