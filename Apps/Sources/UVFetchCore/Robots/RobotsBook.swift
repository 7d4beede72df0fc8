import Dispatch
import Foundation
import UVNetworking

/// The robots.txt rules of a `--robots` run: each origin's file fetched once, before the first
/// of its URLs, and kept for the run (RFC 9309 §2.3; §2.4 lets a crawler keep it a day, longer
/// than any run).
///
/// The fetch goes through a session of its own: redirects followed up to five hops, across
/// origins (§2.3.1.2), and no pacing, so a Crawl-delay spaces the pages, never the robots.txt
/// fetch; `RobotsTxt.fetch(_:with:)` reads its outcome (as the library's `RobotsCache` does,
/// which a run cannot use as it is: the run's queue decides, without waiting, and its fetches
/// are archived). Queue-confined: the table is read and written only on
/// the run's completion queue.
final class RobotsBook: @unchecked Sendable {
    // @unchecked: `entries` is touched only on `queue` (the run's completion queue); the rest
    // is immutable.

    /// Where an origin's rules stand.
    enum Entry {
        /// Its robots.txt is being fetched; its URLs wait (their host is blocked).
        case fetching
        /// What the file says for the run's product token.
        case known(RobotsRules)
    }

    /// The product token matched against user-agent lines (`-A`'s value up to `/` or a space).
    let productToken: String
    private let userAgent: String
    private let manager: SessionManager
    private let queue: DispatchQueue
    @exclusivity(unchecked) private var entries: [String: Entry] = [:]

    /// A book for a run whose requests send `userAgent`, with the run's session settings (TLS,
    /// proxies, DNS) in `configuration` and its security `policy`.
    init(userAgent: String, configuration: SessionConfiguration, policy: SecurityPolicy?, queue: DispatchQueue) throws {
        self.userAgent = userAgent
        productToken = RobotsTxt.productToken(fromUserAgent: userAgent)
        var configuration = configuration
        configuration.maximumRedirects = 5
        configuration.delayPerHost = 0
        configuration.requestsPerSecondPerHost = nil
        // One robots.txt an origin: a connection kept after it would only hold a descriptor
        // beside the crawl's own to that origin (two a host in a crawl of many).
        configuration.idleConnectionTimeout = 0
        manager = SessionManager(configuration: configuration)
        manager.completionQueue = queue
        if let policy { try manager.setSecurityPolicy(policy) }
        self.queue = queue
    }

    /// Where the origin `key` (`RunDriver.hostKey`) stands; nil before its first URL.
    func entry(for key: String) -> Entry? {
        entries[key]
    }

    /// Fetches the robots.txt of `url`'s origin (`key`) and calls `done` with the rules for
    /// the product token and the exchanges `capture` recorded (none without one: `--warc`
    /// archives them, as Heritrix does its robots.txt fetches), on the queue. Call once per
    /// origin, on the queue.
    func fetch(originOf url: URL, key: String, capture: WireCapture? = nil,
               done: @escaping @Sendable (RobotsRules, [WireExchange]) -> Void) {
        entries[key] = .fetching
        guard let robotsURL = RobotsTxt.url(governing: url) else {
            entries[key] = .known(.allowAll)
            return queue.async { done(.allowAll, []) }
        }
        var request = Request(url: robotsURL)
        request.setValue(userAgent, forHTTPHeaderField: "User-Agent")
        request.wireCapture = capture
        let manager = manager, token = productToken
        Task {
            let file = await RobotsTxt.fetch(request, with: manager)
            let rules = file.rules(for: token)
            queue.async { [self] in
                entries[key] = .known(rules)
                done(rules, capture?.exchanges ?? [])
            }
        }
    }

    /// Cancels the fetches in flight (a stopped run) and lets the session go.
    func stop() {
        manager.invalidateSessionCancelingTasks(true, resetSession: false)
    }
}

/// A URL that robots.txt disallows: not requested, recorded with kind "robots".
struct RobotsDisallowed: Error, CustomStringConvertible {
    var url: URL
    var productToken: String

    var description: String {
        "the robots.txt of \(url.scheme ?? "http")://\(url.host ?? "")\(url.port.map { ":\($0)" } ?? "") disallows this URL for \(productToken)"
    }
}
