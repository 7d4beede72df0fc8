/// Makes an input line something Foundation's URL parser takes as it is.
///
/// Given a string with one character a URL cannot hold (a space, "é", a `|`), `URL(string:)`
/// percent-encodes the whole string again, its `%` included: `http://x/a b%41` would request
/// `/a%20b%2541`, another resource. So before parsing, each byte after the authority that a URL
/// cannot hold is escaped here (as curl and browsers do, UTF-8 bytes one by one), and escapes
/// already written stay as they are. The authority is left alone: the parser turns an IDN host
/// into punycode.
enum URLTextEscaping {
    /// `text` ready for `URL(string:)`: itself when nothing needs escaping (the usual line,
    /// with no copy).
    static func parseable(_ text: String) -> String {
        let utf8 = text.utf8
        guard let start = pathStart(utf8), needsEscaping(utf8[start...]) else { return text }
        return escaped(Array(utf8), pathStart: utf8.distance(from: utf8.startIndex, to: start))
    }

    /// `bytes`, which are not valid UTF-8, ready for `URL(string:)`: as `parseable(_:)` does,
    /// and in the authority every byte that is not part of a well-formed UTF-8 sequence
    /// escaped (the parser then refuses the host).
    static func parseable(bytes: [UInt8]) -> String {
        escaped(bytes, pathStart: pathStart(bytes) ?? bytes.count)
    }

    /// Where the path, query or fragment starts: the first `/`, `?` or `#` after "://"; nil
    /// without "://" (not a URL: the parser refuses it anyway) or without a path.
    private static func pathStart<C: Collection>(_ bytes: C) -> C.Index? where C.Element == UInt8 {
        // Every line passes here: bytes compared one by one, nothing allocated.
        var index = bytes.startIndex
        var matched = 0
        while index != bytes.endIndex && matched < 3 {
            let byte = bytes[index]
            let expected = matched == 0 ? UInt8(ascii: ":") : UInt8(ascii: "/")
            matched = byte == expected ? matched + 1 : (byte == UInt8(ascii: ":") ? 1 : 0)
            index = bytes.index(after: index)
        }
        guard matched == 3 else { return nil }
        return bytes[index...].firstIndex {
            $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#")
        }
    }

    private static func needsEscaping<C: Collection>(_ bytes: C) -> Bool where C.Element == UInt8 {
        var sawFragment = false
        var index = bytes.startIndex
        while index != bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "#") {
                if sawFragment { return true }
                sawFragment = true
            } else if byte == UInt8(ascii: "%") {
                guard isEscape(bytes, at: index) else { return true }
            } else if !isAllowed(byte) {
                return true
            }
            index = bytes.index(after: index)
        }
        return false
    }

    /// `bytes` escaped: before `pathStart` only what is not UTF-8, from it on every byte a
    /// path, query or fragment cannot hold (a second "#" and a "%" that starts no escape
    /// included).
    private static func escaped(_ bytes: [UInt8], pathStart: Int) -> String {
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count * 2)
        var index = 0
        while index < pathStart {
            if let length = validSequenceLength(bytes, at: index, end: pathStart) {
                result += bytes[index..<(index + length)]
                index += length
            } else {
                appendEscape(bytes[index], to: &result)
                index += 1
            }
        }
        var sawFragment = false
        for index in pathStart..<bytes.count {
            let byte = bytes[index]
            let kept: Bool
            switch byte {
            case UInt8(ascii: "#"):
                kept = !sawFragment
                sawFragment = true
            case UInt8(ascii: "%"):
                kept = isEscape(bytes, at: index)
            default:
                kept = isAllowed(byte)
            }
            if kept { result.append(byte) } else { appendEscape(byte, to: &result) }
        }
        return String(decoding: result, as: UTF8.self)
    }

    /// RFC 3986's characters of a path, query or fragment: unreserved, sub-delims, ":", "@",
    /// "/" and "?" ("%" and "#" are decided apart).
    private static func isAllowed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "-._~!$&'()*+,;=:@/?".utf8.contains(byte)
        }
    }

    /// Whether the `%` at `index` starts an escape: two hex digits follow.
    private static func isEscape<C: Collection>(_ bytes: C, at index: C.Index) -> Bool where C.Element == UInt8 {
        let first = bytes.index(after: index)
        guard first != bytes.endIndex else { return false }
        let second = bytes.index(after: first)
        guard second != bytes.endIndex else { return false }
        return isHexDigit(bytes[first]) && isHexDigit(bytes[second])
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"), UInt8(ascii: "A")...UInt8(ascii: "F"): return true
        default: return false
        }
    }

    private static func appendEscape(_ byte: UInt8, to result: inout [UInt8]) {
        let hex = Array("0123456789ABCDEF".utf8)
        result += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
    }

    /// The length of the well-formed UTF-8 sequence at `index` before `end` (RFC 3629 section
    /// 4: no overlong forms, surrogates or scalars past U+10FFFF); nil when there is none.
    private static func validSequenceLength(_ bytes: [UInt8], at index: Int, end: Int) -> Int? {
        func continues(_ offset: Int, _ range: ClosedRange<UInt8> = 0x80...0xBF) -> Bool {
            index + offset < end && range.contains(bytes[index + offset])
        }
        switch bytes[index] {
        case 0x00...0x7F: return 1
        case 0xC2...0xDF: return continues(1) ? 2 : nil
        case 0xE0: return continues(1, 0xA0...0xBF) && continues(2) ? 3 : nil
        case 0xE1...0xEC, 0xEE...0xEF: return continues(1) && continues(2) ? 3 : nil
        case 0xED: return continues(1, 0x80...0x9F) && continues(2) ? 3 : nil
        case 0xF0: return continues(1, 0x90...0xBF) && continues(2) && continues(3) ? 4 : nil
        case 0xF1...0xF3: return continues(1) && continues(2) && continues(3) ? 4 : nil
        case 0xF4: return continues(1, 0x80...0x8F) && continues(2) && continues(3) ? 4 : nil
        default: return nil
        }
    }
}
