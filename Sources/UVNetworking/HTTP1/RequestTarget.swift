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

    enum ParseError: Error, Equatable { case invalid(String), unsupportedScheme(String) }

    /// Parses "scheme://[userinfo@]host[:port][/path][?query][#fragment]".
    init(absoluteURL text: String) throws(ParseError) {
        guard let schemeEnd = text.range(of: "://") else { throw .invalid("not an absolute URL") }
        let scheme = text[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https" else { throw .unsupportedScheme(scheme) }
        let rest = text[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }

        var host: Substring
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw .invalid("unterminated IPv6 literal") }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if after.hasPrefix(":") { portText = after.dropFirst() } else if !after.isEmpty { throw .invalid("junk after IPv6 literal") }
        } else if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        } else {
            host = authority
        }
        guard !host.isEmpty else { throw .invalid("no host") }
        let bracketed = authority.hasPrefix("[")
        guard host.utf8.allSatisfy({ bracketed ? Self.isIPv6LiteralByte($0) : Self.isRegNameByte($0) }) else {
            throw .invalid("host has characters a host name cannot have")
        }
        let defaultPort = scheme == "https" ? 443 : 80
        var port = defaultPort
        if let portText, !portText.isEmpty {
            guard portText.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let value = Int(portText), (1...65535).contains(value) else {
                throw .invalid("bad port \(portText)")
            }
            port = value
        }

        var path = rest[authorityEnd...]
        if let hash = path.firstIndex(of: "#") { path = path[..<hash] }
        self.scheme = scheme
        self.host = String(host)
        self.port = port
        let hostForHeader = host.contains(":") ? "[\(host)]" : String(host)
        self.authority = port == defaultPort ? hostForHeader : "\(hostForHeader):\(port)"
        if path.isEmpty {
            self.path = "/"
        } else if path.hasPrefix("?") {
            self.path = "/" + path
        } else {
            self.path = String(path)
        }
        guard self.path.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
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
        byte > 0x20 && byte < 0x7F && !"/?#@[]\\<>\"{}|^`%".utf8.contains(byte)
    }
}
