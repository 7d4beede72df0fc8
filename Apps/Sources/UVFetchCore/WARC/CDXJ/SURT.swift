/// The sort key a CDXJ line starts with: the URL in SURT form ("Sort-friendly URI Reordering
/// Transform"), as the `surt` package that cdxj-indexer and pywb use writes it by default, so an
/// index of ours sorts and looks up like theirs.
///
/// The scheme is dropped; the host is lowercased, loses a leading `www`/`www2.`..., and is
/// written with its labels (or an IPv4 address's octets) reversed and joined by commas, followed
/// by a port that is not the scheme's default; then `)` and the path and query: escapes decoded
/// (then bytes outside printable ASCII, `%` and `#` escaped again), the path's dot segments,
/// empty segments and trailing slash gone, all lowercased, the fragment dropped, the query's
/// parameters sorted and an empty query left out. So
/// `http://www.Example.com:8080/A?b=2&a=1#x` is `com,example:8080)/a?a=1&b=2`.
enum SURT {
    /// The key of `url` (an absolute http or https URL, as a WARC-Target-URI holds it); the URL
    /// itself when it has no authority to reorder.
    static func key(_ url: String) -> String {
        var rest = Substring(url)
        if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
        guard let schemeEnd = rest.range(of: "://") else { return url }
        let scheme = rest[..<schemeEnd.lowerBound].lowercased()
        rest = rest[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        var target = String(rest[authorityEnd...])
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        var (host, port) = split(authority)
        host = host.lowercased()
        while host.hasSuffix(".") { host.removeLast() }
        if let dot = host.firstIndex(of: "."), isWWW(host[..<dot]) { host = String(host[host.index(after: dot)...]) }
        if port == "80" && scheme == "http" || port == "443" && scheme == "https" { port = nil }
        let reversed = host.contains(":") ? host : host.split(separator: ".", omittingEmptySubsequences: false).reversed().joined(separator: ",")
        if target.isEmpty || target.hasPrefix("?") { target = "/" + target }
        return reversed + (port.map { ":" + $0 } ?? "") + ")" + canonical(target)
    }

    /// Host and port of an authority; an IPv6 literal without its brackets.
    private static func split(_ authority: Substring) -> (host: String, port: String?) {
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
            let host = String(authority[authority.index(after: authority.startIndex)..<close])
            let after = authority[authority.index(after: close)...]
            return (host, after.hasPrefix(":") && after.count > 1 ? String(after.dropFirst()) : nil)
        }
        if let colon = authority.lastIndex(of: ":") {
            let port = authority[authority.index(after: colon)...]
            return (String(authority[..<colon]), port.isEmpty ? nil : String(port))
        }
        return (String(authority), nil)
    }

    /// `www`, or `www` and digits: the label the surt package strips off a host.
    private static func isWWW(_ label: Substring) -> Bool {
        label.hasPrefix("www") && label.dropFirst(3).allSatisfy { $0.isASCII && $0.isNumber }
    }

    /// Path and query, each apart: escapes decoded as long as any decode, the path's dot
    /// segments resolved, empty segments and a trailing slash dropped, the bytes that must be
    /// escaped escaped again, lowercased, the query's parameters sorted.
    private static func canonical(_ target: String) -> String {
        let question = target.firstIndex(of: "?")
        let path = normalized(decoded(Array(target[..<(question ?? target.endIndex)].utf8)))
        var result = escaped(path).lowercased()
        if let question {
            let query = escaped(decoded(Array(target[target.index(after: question)...].utf8))).lowercased()
            if !query.isEmpty {
                result += "?" + query.split(separator: "&", omittingEmptySubsequences: false).sorted().joined(separator: "&")
            }
        }
        return result
    }

    private static func decoded(_ bytes: [UInt8]) -> [UInt8] {
        var bytes = bytes
        while let once = decodeOnce(bytes) { bytes = once }
        return bytes
    }

    /// `.` segments dropped, `..` taking the one before it off (kept when there is none), empty
    /// segments dropped (so no doubled or trailing slash): what the surt package leaves of a path.
    private static func normalized(_ path: [UInt8]) -> [UInt8] {
        var kept: [ArraySlice<UInt8>] = []
        for segment in path.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true) {
            if segment.elementsEqual([UInt8(ascii: ".")]) { continue }
            if segment.elementsEqual([UInt8(ascii: "."), UInt8(ascii: ".")]), let last = kept.last,
               !last.elementsEqual([UInt8(ascii: "."), UInt8(ascii: ".")]) {
                kept.removeLast()
                continue
            }
            kept.append(segment)
        }
        var out: [UInt8] = []
        for segment in kept { out.append(UInt8(ascii: "/")); out += segment }
        return out.isEmpty ? [UInt8(ascii: "/")] : out
    }

    /// Bytes outside printable ASCII, `%` and `#` as `%XX`.
    private static func escaped(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        for byte in bytes {
            if byte <= 0x20 || byte >= 0x7F || byte == UInt8(ascii: "%") || byte == UInt8(ascii: "#") {
                out += Array("%".utf8) + hex(byte)
            } else {
                out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `bytes` with every `%XX` decoded; nil when there is none.
    private static func decodeOnce(_ bytes: [UInt8]) -> [UInt8]? {
        var out: [UInt8] = []
        var changed = false
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
               let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2]) {
                out.append(high << 4 | low)
                index += 3
                changed = true
            } else {
                out.append(bytes[index])
                index += 1
            }
        }
        return changed ? out : nil
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    private static func hex(_ byte: UInt8) -> [UInt8] {
        let digits = Array("0123456789ABCDEF".utf8)
        return [digits[Int(byte >> 4)], digits[Int(byte & 15)]]
    }
}
