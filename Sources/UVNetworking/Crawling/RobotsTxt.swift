import Foundation

/// A parsed robots.txt file (RFC 9309): which URLs of an origin a crawler may fetch, and how
/// long it should wait between requests. Pure: it reads bytes given to it and does no I/O, so
/// fetching `/robots.txt` (and following up to five redirects) is the caller's part;
/// `init(status:body:)` turns the outcome of that fetch into rules.
///
/// ```swift
/// let robots = RobotsTxt(parsing: Array("User-agent: *\nDisallow: /private/\n".utf8))
/// let rules = robots.rules(for: RobotsTxt.productToken(fromUserAgent: "uvfetch/1.0"))
/// rules.isAllowed(pathAndQuery: "/private/report")  // false
/// rules.isAllowed(pathAndQuery: "/robots.txt")      // true, always
/// ```
///
/// Values are equal when their files parse to the same groups, rules and sitemaps in the same
/// order: comments, blank lines, line endings and the case of keys make no difference.
public struct RobotsTxt: Sendable, Equatable {
    /// RFC 9309 §2.5: a parser may stop after a limit, which must be at least 500 KiB. Bytes
    /// past it are not read, and a line it cuts is dropped.
    public static let maximumParsedBytes = 500 * 1024

    /// The groups, in file order.
    let groups: [RobotsGroup]
    /// For each lowercased product token, the groups naming it, in file order.
    let groupsByAgent: [String: [Int]]
    /// The groups naming "*".
    let groupsForEveryone: [Int]

    /// The values of the `sitemap` lines, in file order, as written (RFC 9309 §2.2.4 lets a
    /// crawler read this record; it belongs to no group).
    public let sitemaps: [String]

    /// Parses a robots.txt file. It never fails: a line that cannot be used is skipped, and
    /// bytes that make no rule leave everything allowed. Only the first `maximumParsedBytes`
    /// are read; a line cut by that limit is dropped rather than read in part.
    public init(parsing bytes: some Collection<UInt8>) {
        let parser = RobotsTxtParser(bytes, limit: Self.maximumParsedBytes)
        var byAgent: [String: [Int]] = [:]
        var everyone: [Int] = []
        for (index, group) in parser.groups.enumerated() {
            for agent in group.agents {
                if agent == "*" {
                    if everyone.last != index { everyone.append(index) }
                } else if byAgent[agent]?.last != index {
                    byAgent[agent, default: []].append(index)
                }
            }
        }
        groups = parser.groups
        groupsByAgent = byAgent
        groupsForEveryone = everyone
        sitemaps = parser.sitemaps
    }

    /// No file, or one with no rules: every URL allowed (RFC 9309 §2.3.1.3, "unavailable").
    public static let allowAll = RobotsTxt(parsing: [UInt8]())

    /// Every URL disallowed but `/robots.txt` itself (RFC 9309 §2.3.1.4, "unreachable"): the
    /// file `User-agent: *` / `Disallow: /`, and equal to it.
    public static let disallowAll = RobotsTxt(parsing: Array("User-agent: *\nDisallow: /\n".utf8))

    /// The rules that apply to the crawler named `productToken` (RFC 9309 §2.2.1): every group
    /// naming it, merged, matched whole and case-insensitively ("uvfetch" is not named by
    /// "uvfetch-extra" or "uvfetchbot"); only when none does, the `*` group; with neither,
    /// none (everything allowed). A group naming the token but holding no rules still applies:
    /// it allows everything, whatever the `*` group says.
    public func rules(for productToken: String) -> RobotsRules {
        let chosen = groupIndices(for: productToken)
        guard !chosen.isEmpty else { return .allowAll }
        var rules: [RobotsRule] = []
        var crawlDelay: Double?
        for index in chosen {
            rules.append(contentsOf: groups[index].rules)
            crawlDelay = groups[index].crawlDelay ?? crawlDelay
        }
        return RobotsRules(rules: rules, crawlDelay: crawlDelay)
    }

    /// Whether the crawler named `productToken` may fetch `url`, as `rules(for:)` and
    /// `RobotsRules.isAllowed(_:)` decide, without building the merged rules: for one URL. A
    /// crawler asking for many URLs of an origin keeps `rules(for:)` instead.
    public func isAllowed(_ url: URL, productToken: String) -> Bool {
        isAllowed(RobotsRequestPath(url), productToken: productToken)
    }

    /// Whether the crawler named `productToken` may fetch the request target `pathAndQuery`
    /// ("/a/b?c=d"), as `RobotsRules.isAllowed(pathAndQuery:)` decides.
    public func isAllowed(pathAndQuery: some StringProtocol, productToken: String) -> Bool {
        isAllowed(RobotsRequestPath(pathAndQuery: pathAndQuery), productToken: productToken)
    }

    /// The Crawl-delay, in seconds, of the groups that apply to `productToken` (as
    /// `rules(for:)` chooses them; the last valid value in file order), or nil.
    public func crawlDelay(productToken: String) -> Double? {
        groupIndices(for: productToken).reversed().lazy.compactMap { groups[$0].crawlDelay }.first
    }

    private func isAllowed(_ path: RobotsRequestPath, productToken: String) -> Bool {
        if path.isRobotsTxt { return true }
        var best: RobotsRule?
        for index in groupIndices(for: productToken) {
            for rule in groups[index].rules {
                if let current = best, !rule.isMoreSpecific(than: current) { continue }
                if rule.matches(path.bytes) { best = rule }
            }
        }
        return best?.isAllow ?? true
    }

    private func groupIndices(for productToken: String) -> [Int] {
        groupsByAgent[Self.lookupKey(productToken)] ?? groupsForEveryone
    }
}
