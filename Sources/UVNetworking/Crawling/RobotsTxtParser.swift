/// Reads a robots.txt file into groups, line by line (RFC 9309 §2.1–§2.2), and never fails:
/// §2.3.1.5 asks for every parseable rule, so a line it cannot use is skipped and nothing else.
///
/// - Lines end at LF, CR or CRLF; a UTF-8 byte order mark at the start is skipped.
/// - "#" starts a comment, to the end of the line, wherever it is.
/// - A line is `key: value`; the key is matched case-insensitively and spaces and tabs around
///   the key, the colon and the value do not count. A line without a colon is skipped.
/// - A run of `user-agent` lines starts a group; `allow` and `disallow` lines are its rules and
///   end the run, so the next `user-agent` starts another group. Rules before any group are
///   skipped.
/// - Every other line, known or not (`sitemap`, `crawl-delay`, `host`, typos), leaves the
///   groups as they are: §2.2.4 says other records "MUST NOT interfere" and a sitemap line
///   "MUST NOT terminate a group". `crawl-delay` is read into the group being built; `sitemap`
///   belongs to no group.
struct RobotsTxtParser {
    private(set) var groups: [RobotsGroup] = []
    private(set) var sitemaps: [String] = []
    /// Between a group's first `user-agent` line and its first rule.
    private var inAgentRun = false

    /// Parses the first `limit` bytes of `input`. A line the limit cuts (one whose end is not
    /// within the limit, in a file longer than it) is dropped, not read in part: half of
    /// "Allow: /private-area" is a wider rule than its author wrote.
    init(_ input: some Collection<UInt8>, limit: Int) {
        var bytes = Array(input.prefix(limit + 1))
        let isCut = bytes.count > limit
        if isCut { bytes.removeLast() }
        var start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        var index = start
        while index < bytes.count {
            let byte = bytes[index]
            guard byte == Self.lineFeed || byte == Self.carriageReturn else {
                index += 1
                continue
            }
            read(line: bytes[start..<index])
            index += 1
            if byte == Self.carriageReturn, index < bytes.count, bytes[index] == Self.lineFeed { index += 1 }
            start = index
        }
        if start < bytes.count && !isCut { read(line: bytes[start...]) }
    }

    private mutating func read(line: ArraySlice<UInt8>) {
        let content = line[..<(line.firstIndex(of: UInt8(ascii: "#")) ?? line.endIndex)]
        guard let colon = content.firstIndex(of: UInt8(ascii: ":")) else { return }
        let value = Self.trimmed(content[(colon + 1)...])
        let key = Key(Self.trimmed(content[..<colon]))
        switch key {
        case .userAgent:
            guard let token = RobotsTxt.agentToken(inValue: value) else { return }
            if !inAgentRun {
                groups.append(RobotsGroup())
                inAgentRun = true
            }
            groups[groups.count - 1].agents.append(token)
        case .allow, .disallow:
            guard !groups.isEmpty else { return }
            inAgentRun = false
            if let rule = RobotsRule(isAllow: key == .allow, value: value) {
                groups[groups.count - 1].rules.append(rule)
            }
        case .crawlDelay:
            guard !groups.isEmpty, let delay = Self.crawlDelay(value) else { return }
            groups[groups.count - 1].crawlDelay = delay
        case .sitemap:
            if !value.isEmpty { sitemaps.append(String(decoding: value, as: UTF8.self)) }
        case nil:
            return
        }
    }

    /// Crawl-delay is in no RFC, but crawlers read it as seconds between requests: a plain
    /// decimal number ("10", "0.5", ".5", "2."). Signs, exponents, "inf" and "nan" are not
    /// numbers a robots.txt author writes, and a negative delay means nothing, so all are
    /// ignored, as is a value too large to be finite.
    private static func crawlDelay(_ value: ArraySlice<UInt8>) -> Double? {
        var digits = 0
        var dots = 0
        for byte in value {
            if byte == UInt8(ascii: ".") {
                dots += 1
            } else if byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") {
                digits += 1
            } else {
                return nil
            }
        }
        guard digits > 0, dots <= 1, let delay = Double(String(decoding: value, as: UTF8.self)), delay.isFinite else { return nil }
        return delay
    }

    private static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        guard let first = bytes.firstIndex(where: { !RobotsTxt.isBlank($0) }),
              let last = bytes.lastIndex(where: { !RobotsTxt.isBlank($0) }) else { return bytes[bytes.endIndex...] }
        return bytes[first...last]
    }

    private static let lineFeed = UInt8(ascii: "\n")
    private static let carriageReturn = UInt8(ascii: "\r")

    /// The keys read; any other is skipped.
    private enum Key: Equatable {
        case userAgent, allow, disallow, crawlDelay, sitemap

        init?(_ bytes: ArraySlice<UInt8>) {
            // No key is longer; a long one is not lowercased to be refused.
            guard bytes.count <= 11 else { return nil }
            switch String(decoding: bytes.map(RobotsTxt.asciiLowercased), as: UTF8.self) {
            case "user-agent": self = .userAgent
            case "allow": self = .allow
            case "disallow": self = .disallow
            case "crawl-delay": self = .crawlDelay
            case "sitemap": self = .sitemap
            default: return nil
            }
        }
    }
}
