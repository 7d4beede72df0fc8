import Foundation
import Synchronization

/// The robots.txt policy of a crawler built on the library: asked before each URL, it fetches
/// the URL's origin's `/robots.txt` once, keeps the rules for the crawler's product token, and
/// answers from them (RFC 9309). uvfetch's `--robots` follows the same rules.
///
/// ```swift
/// let robots = RobotsCache(userAgent: "MyCrawler/1.0")
/// if await robots.isAllowed(url) {
///     let delay = await robots.rules(for: url).crawlDelay   // space this origin's requests
///     // fetch url, sending the same User-Agent
/// }
/// ```
///
/// - One fetch per origin: callers asking at once for an origin whose file is not known yet
///   wait for the same fetch.
/// - The fetch goes through a session of the cache's own, made from the configuration given
///   (TLS, proxies, DNS) with redirects limited to five, followed across origins (§2.3.1.2),
///   no pacing (a Crawl-delay spaces the pages, not robots.txt), and connections closed once
///   read. It sends `userAgent`; its outcome is read as `RobotsTxt.fetch(_:with:)` says: 4xx
///   allows everything, 5xx or no answer disallows everything.
/// - Rules are kept `lifetime` seconds (RFC 9309 §2.4: a day by default), then fetched again
///   when next asked for.
///
/// Thread-safe; the async methods never block a thread while a fetch runs.
public final class RobotsCache: Sendable {
    /// The User-Agent sent with each robots.txt fetch.
    public let userAgent: String
    /// The name matched against `user-agent` lines: `userAgent` up to its first `/` or space.
    public let productToken: String
    /// Seconds an origin's rules are kept before they are fetched again.
    public let lifetime: TimeInterval
    private let manager: SessionManager
    private let entries = Mutex<[String: Entry]>([:])

    private enum Entry {
        /// A fetch in flight: every caller awaits it.
        case fetching(Task<RobotsRules, Never>)
        /// The rules, and when they stop being fresh.
        case known(RobotsRules, until: Date)
    }

    /// What a question found under the lock.
    private enum Lookup {
        case known(RobotsRules)
        case pending(Task<RobotsRules, Never>)
    }

    /// A cache for a crawler that sends `userAgent`, fetching through a session made from
    /// `configuration` (on `loop`), with `policy` for https origins when given.
    public init(userAgent: String, configuration: SessionConfiguration = .default, lifetime: TimeInterval = 24 * 3600,
                loop: EventLoop = .shared, policy: SecurityPolicy? = nil) throws(NetworkingError) {
        self.userAgent = userAgent
        productToken = RobotsTxt.productToken(fromUserAgent: userAgent)
        self.lifetime = lifetime
        var configuration = configuration
        configuration.maximumRedirects = 5
        configuration.delayPerHost = 0
        configuration.requestsPerSecondPerHost = nil
        configuration.retrier = nil
        configuration.idleConnectionTimeout = 0
        manager = SessionManager(configuration: configuration, loop: loop)
        if let policy { try manager.setSecurityPolicy(policy) }
    }

    /// The rules for `url`'s origin, fetched first when not known (or no longer fresh). A URL
    /// without a scheme or host has no robots.txt: everything is allowed.
    public func rules(for url: URL) async -> RobotsRules {
        guard let robotsURL = RobotsTxt.url(governing: url) else { return .allowAll }
        let key = robotsURL.absoluteString.lowercased()
        let now = Date()
        let lookup = entries.withLock { entries -> Lookup in
            switch entries[key] {
            case .known(let rules, let until) where until > now:
                return .known(rules)
            case .fetching(let task):
                return .pending(task)
            case .known, nil:
                let task = Task { [manager, userAgent, productToken] in
                    var request = Request(url: robotsURL)
                    request.setValue(userAgent, forHTTPHeaderField: "User-Agent")
                    return await RobotsTxt.fetch(request, with: manager).rules(for: productToken)
                }
                entries[key] = .fetching(task)
                return .pending(task)
            }
        }
        let pending: Task<RobotsRules, Never>
        switch lookup {
        case .known(let rules): return rules
        case .pending(let task): pending = task
        }
        let rules = await pending.value
        entries.withLock { entries in
            if case .fetching = entries[key] { entries[key] = .known(rules, until: Date().addingTimeInterval(lifetime)) }
        }
        return rules
    }

    /// Whether the crawler may fetch `url` (`rules(for:)`, then `RobotsRules.isAllowed`).
    public func isAllowed(_ url: URL) async -> Bool {
        await rules(for: url).isAllowed(url)
    }

    /// The rules for `url`'s origin when they are known and fresh, without waiting; nil
    /// otherwise. For a crawler's fast path: most URLs of a crawl are of origins asked before.
    public func cachedRules(for url: URL) -> RobotsRules? {
        guard let robotsURL = RobotsTxt.url(governing: url) else { return .allowAll }
        let key = robotsURL.absoluteString.lowercased()
        return entries.withLock { entries in
            guard case .known(let rules, let until) = entries[key], until > Date() else { return nil }
            return rules
        }
    }

    /// Forgets every origin's rules: the next question fetches again.
    public func removeAll() {
        entries.withLock { $0.removeAll() }
    }

    /// Cancels the fetches in flight (their callers get the "unreachable" rules, everything
    /// disallowed) and closes the cache's connections; later fetches fail the same way.
    public func invalidate() {
        manager.invalidateSessionCancelingTasks(true, resetSession: false)
    }

    /// `invalidate()`, returning once the fetches have ended and the connections are closed.
    public func shutdown() async {
        await manager.shutdown(deadline: .now)
    }
}
