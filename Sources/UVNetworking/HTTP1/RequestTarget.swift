/// The parts of an absolute http URL that an HTTP/1.1 request needs, taken from the URL's string
/// exactly as written (Foundation's accessors decode percent-escapes, which would change the
/// request target).
struct RequestTarget: Equatable, Sendable {
    var scheme: String
    /// Host without brackets: "example.com", "127.0.0.1", "::1".
    var host: String
    var port: Int
    /// The Host header value: host (bracketed for IPv6) plus ":port" when it is not the default.
    var authority: String
    /// origin-form: path and query, "/" when the URL has no path. The fragment is dropped.
    var path: String
    /// The userinfo before "@" as written (escaped), nil without one: it becomes credentials
    /// (`URLCredentials`), never part of the target or Host.
    var userinfo: String?

    enum ParseError: Error, Equatable { case invalid(String), unsupportedScheme(String) }

    /// Parses "scheme://[userinfo@]host[:port][/path][?query][#fragment]" on the UTF-8 bytes.
    init(absoluteURL text: String) throws(ParseError) {
        var text = text
        let result: Result<RequestTarget, ParseError> = text.withUTF8 { bytes in
            Result { () throws(ParseError) in try RequestTarget(bytes: bytes) }
        }
        self = try result.get()
    }

    private init(bytes: UnsafeBufferPointer<UInt8>) throws(ParseError) {
        let count = bytes.count
        var schemeEnd = -1
        var i = 0
        while i + 2 < count {
            if bytes[i] == 0x3A && bytes[i + 1] == 0x2F && bytes[i + 2] == 0x2F { schemeEnd = i; break }
            i += 1
        }
        guard schemeEnd >= 0 else { throw .invalid("not an absolute URL") }
        func string(_ from: Int, _ to: Int) -> String {
            String(decoding: UnsafeBufferPointer(rebasing: bytes[from..<to]), as: UTF8.self)
        }
        func lowered(_ b: UInt8) -> UInt8 { (b >= 0x41 && b <= 0x5A) ? b | 0x20 : b }
        let isHTTP = schemeEnd == 4 && lowered(bytes[0]) == 0x68 && lowered(bytes[1]) == 0x74 && lowered(bytes[2]) == 0x74 && lowered(bytes[3]) == 0x70
        let isHTTPS = schemeEnd == 5 && lowered(bytes[0]) == 0x68 && lowered(bytes[1]) == 0x74 && lowered(bytes[2]) == 0x74 && lowered(bytes[3]) == 0x70 && lowered(bytes[4]) == 0x73
        guard isHTTP || isHTTPS else { throw .unsupportedScheme(string(0, schemeEnd).lowercased()) }
        let scheme = isHTTP ? "http" : "https"
        let restStart = schemeEnd + 3
        var authorityEnd = restStart
        while authorityEnd < count, bytes[authorityEnd] != 0x2F, bytes[authorityEnd] != 0x3F, bytes[authorityEnd] != 0x23 { authorityEnd += 1 }
        var authorityStart = restStart
        var j = authorityEnd
        while j > restStart { j -= 1; if bytes[j] == 0x40 { authorityStart = j + 1; break } }
        var hostStart = authorityStart, hostEnd = authorityEnd
        var portStart = -1
        let bracketed = authorityStart < authorityEnd && bytes[authorityStart] == 0x5B
        if bracketed {
            var close = -1
            var k = authorityStart
            while k < authorityEnd { if bytes[k] == 0x5D { close = k; break }; k += 1 }
            guard close >= 0 else { throw .invalid("unterminated IPv6 literal") }
            hostStart = authorityStart + 1; hostEnd = close
            if close + 1 < authorityEnd {
                guard bytes[close + 1] == 0x3A else { throw .invalid("junk after IPv6 literal") }
                portStart = close + 2
            }
        } else {
            var k = authorityEnd
            while k > authorityStart { k -= 1; if bytes[k] == 0x3A { hostEnd = k; portStart = k + 1; break } }
        }
        guard hostEnd > hostStart else { throw .invalid("no host") }
        var hasColon = false
        for k in hostStart..<hostEnd {
            let b = bytes[k]
            if b == 0x3A { hasColon = true }
            guard bracketed ? Self.isIPv6LiteralByte(b) : Self.isRegNameByte(b) else {
                throw .invalid("host has characters a host name cannot have")
            }
        }
        let defaultPort = isHTTPS ? 443 : 80
        var port = defaultPort
        if portStart >= 0 && portStart < authorityEnd {
            var value = 0
            for k in portStart..<authorityEnd {
                let b = bytes[k]
                guard b >= 0x30 && b <= 0x39, value <= 65535 else { throw .invalid("bad port \(string(portStart, authorityEnd))") }
                value = value * 10 + Int(b - 0x30)
            }
            guard (1...65535).contains(value) else { throw .invalid("bad port \(string(portStart, authorityEnd))") }
            port = value
        }
        var pathEnd = authorityEnd
        while pathEnd < count, bytes[pathEnd] != 0x23 { pathEnd += 1 }
        self.scheme = scheme
        let host = string(hostStart, hostEnd)
        self.host = host
        self.port = port
        // Host as the Host field writes it: bracketed when it is an IPv6 literal.
        let hostForHeader = hasColon == bracketed ? string(authorityStart, hostEnd + (bracketed ? 1 : 0))
            : hasColon ? "[\(host)]" : host
        if port == defaultPort {
            self.authority = hostForHeader
        } else if hasColon == bracketed && bytes[portStart] != 0x30 {
            // The port as written is its canonical form: the URL's bytes, with no formatting.
            self.authority = string(authorityStart, authorityEnd)
        } else {
            self.authority = "\(hostForHeader):\(port)"
        }
        // Nothing allocated for the usual URL without one.
        self.userinfo = authorityStart > restStart ? string(restStart, authorityStart - 1) : nil
        if pathEnd == authorityEnd {
            self.path = "/"
        } else if bytes[authorityEnd] == 0x3F {
            self.path = "/" + string(authorityEnd, pathEnd)
        } else {
            self.path = string(authorityEnd, pathEnd)
        }
        for k in authorityEnd..<pathEnd where !(bytes[k] > 0x20 && bytes[k] < 0x7F) {
            throw .invalid("the path has spaces, control or non-ASCII bytes: percent-encode them")
        }
    }

    private static func isIPv6LiteralByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"), UInt8(ascii: "A")...UInt8(ascii: "F"):
            return true
        default:
            return byte == UInt8(ascii: ":") || byte == UInt8(ascii: ".")
        }
    }

    /// Visible ASCII other than the delimiters that end or break an authority.
    private static func isRegNameByte(_ byte: UInt8) -> Bool {
        guard byte > 0x20 && byte < 0x7F else { return false }
        switch byte {
        case 0x2F, 0x3F, 0x23, 0x40, 0x5B, 0x5D, 0x5C, 0x3C, 0x3E, 0x22, 0x7B, 0x7D, 0x7C, 0x5E, 0x60, 0x25: return false
        default: return true
        }
    }
}
