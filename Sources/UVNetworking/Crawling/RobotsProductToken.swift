extension RobotsTxt {
    /// The product token a crawler names itself by in robots.txt, taken from its User-Agent
    /// value: the text up to the first "/", space or tab, leading spaces and tabs skipped.
    /// "MyBot/1.0 (+http://example.com/bot)" gives "MyBot".
    ///
    /// RFC 9309 §2.2.1 asks a crawler to pick a token that is a substring of its User-Agent and
    /// made of letters, "_" and "-" only; this is the usual such substring, the product of
    /// RFC 9110 §10.1.5's `product "/" product-version`.
    public static func productToken(fromUserAgent userAgent: String) -> String {
        let bytes = userAgent.utf8
        let start = bytes.firstIndex { !isBlank($0) } ?? bytes.endIndex
        let end = bytes[start...].firstIndex { isBlank($0) || $0 == UInt8(ascii: "/") } ?? bytes.endIndex
        return String(decoding: bytes[start..<end], as: UTF8.self)
    }

    /// The token a `user-agent` line names: "*", or the leading run of letters, "_" and "-" of
    /// its value, lowercased (§2.2.1: matched case-insensitively). "ExampleBot/2.1" names
    /// "examplebot", as Google reads it. Nil when the value names no token ("", "(bot)",
    /// "*bot"), and such a line is ignored: it is no `startgroupline` of §2.1's grammar.
    static func agentToken(inValue value: ArraySlice<UInt8>) -> String? {
        if value.first == UInt8(ascii: "*") {
            let next = value.index(after: value.startIndex)
            return next == value.endIndex || isBlank(value[next]) ? "*" : nil
        }
        let end = value.firstIndex { !isIdentifier($0) } ?? value.endIndex
        guard end != value.startIndex else { return nil }
        return String(decoding: value[..<end].map(asciiLowercased), as: UTF8.self)
    }

    /// `token` as the keys are stored: ASCII letters lowercased, nothing else changed, so that a
    /// token with other characters can match no group (it matches only whole, §2.2.1).
    static func lookupKey(_ token: String) -> String {
        guard token.utf8.contains(where: { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }) else { return token }
        return String(decoding: token.utf8.map(asciiLowercased), as: UTF8.self)
    }

    static func isBlank(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
    }

    /// §2.2.1: a product token is letters, "_" and "-".
    private static func isIdentifier(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "_"), UInt8(ascii: "-"):
            true
        default:
            false
        }
    }

    static func asciiLowercased(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 0x20 : byte
    }
}
