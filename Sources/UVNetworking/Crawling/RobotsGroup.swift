/// One group of a robots.txt file (RFC 9309 §2.1): the product tokens of its run of
/// `user-agent` lines, then its rules, in file order.
struct RobotsGroup: Sendable, Equatable {
    /// Lowercased product tokens, "*" for the group that applies to everyone else.
    var agents: [String] = []
    var rules: [RobotsRule] = []
    /// The group's last valid Crawl-delay, in seconds.
    var crawlDelay: Double?
}
