import Foundation

/// The rules of a robots.txt file that apply to one crawler: the groups naming its product
/// token, merged, or else the `*` group (RFC 9309 §2.2.1). Made once per origin with
/// `RobotsTxt.rules(for:)`, then asked for every URL of that origin, without choosing the group
/// again; a decision allocates only the URL's normalised path.
public struct RobotsRules: Sendable, Equatable {
    /// Every rule of the chosen groups, most specific first (most octets, then allow before
    /// disallow), so that the first one that matches decides.
    let rules: [RobotsRule]

    /// Seconds to wait between requests, from the chosen groups' Crawl-delay lines (the last
    /// valid one in file order); nil when they have none. Not part of RFC 9309, but widely
    /// sent; the parser reads only plain non-negative decimal numbers.
    public let crawlDelay: Double?

    /// No rules: everything allowed, no delay. What a crawler follows when no group applies.
    public static let allowAll = RobotsRules(rules: [], crawlDelay: nil)

    init(rules: [RobotsRule], crawlDelay: Double?) {
        // A stable sort: among equally specific rules of the same kind, which comes first
        // makes no difference, but the value stays the same for the same file.
        self.rules = rules.enumerated().sorted { left, right in
            if left.element.isMoreSpecific(than: right.element) { return true }
            if right.element.isMoreSpecific(than: left.element) { return false }
            return left.offset < right.offset
        }.map(\.element)
        self.crawlDelay = crawlDelay
    }

    /// Whether the crawler may fetch `url`: its path and query (RFC 9309 §2.2.2) are matched
    /// against the rules, the most specific matching rule decides, and with none matching the
    /// URL is allowed. `/robots.txt` is always allowed. The URL's scheme and host are not looked
    /// at: these rules are for the origin whose robots.txt they came from.
    public func isAllowed(_ url: URL) -> Bool {
        isAllowed(RobotsRequestPath(url))
    }

    /// Whether the crawler may fetch the request target `pathAndQuery` ("/a/b?c=d", percent-
    /// encoded as sent; a fragment is ignored, "" means "/"), as `isAllowed(_:)` decides for a URL.
    public func isAllowed(pathAndQuery: some StringProtocol) -> Bool {
        isAllowed(RobotsRequestPath(pathAndQuery: pathAndQuery))
    }

    func isAllowed(_ path: RobotsRequestPath) -> Bool {
        if path.isRobotsTxt { return true }
        for rule in rules where rule.matches(path.bytes) {
            return rule.isAllow
        }
        return true
    }
}
