import Foundation
import Synchronization

/// Cookies kept in memory by the rules of RFC 6265: what Foundation calls HTTPCookieStorage.
///
/// A session uses a store only when its configuration has one
/// (`SessionConfiguration.cookieStore`, nil by default) and the request allows it
/// (`Request.httpShouldHandleCookies`, true by default). Then the store's cookies for the URL go
/// out in a Cookie field, unless the request sets its own, and the response's Set-Cookie fields
/// come back into the store before the completion handler runs.
///
/// What it enforces: domain and path matching (§5.1.3, §5.1.4); Secure cookies only over
/// https; expiry (Expires, Max-Age winning over it); a Domain attribute must cover the request
/// host and, lacking a public suffix list, must contain a dot (see `setCookies`); Secure cookies
/// can be set, replaced or deleted only over https (RFC 6265bis). Limits keep a hostile server
/// from growing it without bound: 50 cookies per domain, 3000 in all, 4096 bytes of name and
/// value per cookie; past a limit expired cookies go first, then the least recently used.
///
/// Not persisted: the store lives in memory, as long as the object. Thread-safe: every method
/// may be called from any thread.
public final class CookieStore: Sendable {
    /// One store for the whole process, for code that used NSHTTPCookieStorage's shared
    /// storage. No session uses it unless configured to (`configuration.cookieStore = .shared`).
    public static let shared = CookieStore()

    /// The most cookies kept per domain (RFC 6265 §6.1's minimum for a user agent).
    public static var maximumCookiesPerDomain: Int { CookieLimits.standard.cookiesPerDomain }
    /// The most cookies kept in one store.
    public static var maximumCookieCount: Int { CookieLimits.standard.cookies }
    /// The longest name plus value accepted, in bytes; a longer cookie is ignored.
    public static var maximumNameAndValueBytes: Int { CookieLimits.standard.nameAndValueBytes }

    private let jar: Mutex<CookieJar>
    /// The clock for expiry and creation times; tests move it.
    private let now: @Sendable () -> Date

    /// An empty store with the standard limits.
    public convenience init() {
        self.init(limits: .standard, now: { Date() })
    }

    init(limits: CookieLimits, now: @escaping @Sendable () -> Date) {
        self.jar = Mutex(CookieJar(limits: limits))
        self.now = now
    }

    /// The cookies a request to `url` would send (RFC 6265 §5.4), in the order it sends them:
    /// longer paths first, then older cookies first. Empty for a URL that is not http or https.
    ///
    /// Reading counts as using them, which keeps them from eviction.
    public func cookies(for url: URL) -> [Cookie] {
        guard let request = CookieRequestURL(url) else { return [] }
        return cookies(for: request)
    }

    /// The value of the Cookie field a request to `url` would carry ("a=1; b=2"); nil when no
    /// cookie applies.
    public func cookieHeaderValue(for url: URL) -> String? {
        guard let request = CookieRequestURL(url) else { return nil }
        return cookieHeaderValue(for: request)
    }

    /// Stores the cookies of Set-Cookie field values received from `url`, as a response to a
    /// request for it would: each line is parsed by RFC 6265 §5.2 and accepted or ignored by
    /// §5.3. Lines that cannot be used are ignored silently, as a user agent must. A line that
    /// arrives expired deletes the cookie it names.
    ///
    /// This is also the way to add a cookie by hand (NSHTTPCookieStorage's setCookie:): write
    /// it as a Set-Cookie line, and it goes through the same checks as a server's.
    ///
    /// Public suffixes: with no public suffix list available, a Domain attribute without a dot
    /// ("Domain=com") is refused unless it is the request host itself (then the cookie is
    /// host-only); a Domain naming a multi-label suffix such as "co.uk" cannot be recognised and
    /// is accepted when it domain-matches the host.
    public func setCookies(fromSetCookieHeaders values: [String], for url: URL) {
        guard !values.isEmpty, let request = CookieRequestURL(url) else { return }
        setCookies(values, for: request)
    }

    /// Every cookie not yet expired, oldest first.
    public var allCookies: [Cookie] {
        let now = self.now()
        return jar.withLock { $0.allCookies(now: now) }
    }

    /// Removes the stored cookie with the name, domain and path of `cookie`, if any.
    public func deleteCookie(_ cookie: Cookie) {
        jar.withLock { $0.remove(cookie) }
    }

    /// Removes every cookie.
    public func removeAll() {
        jar.withLock { $0.removeAll { _ in true } }
    }

    /// Removes the cookies first stored at or after `date` (HTTPCookieStorage's method of the
    /// same name). A cookie replaced since keeps its first creation time.
    public func removeCookies(since date: Date) {
        jar.withLock { $0.removeAll { $0.creationTime >= date } }
    }

    // MARK: Internal entry points

    var isEmpty: Bool { jar.withLock { $0.count == 0 } }

    func cookies(for request: CookieRequestURL) -> [Cookie] {
        let now = self.now()
        return jar.withLock { $0.cookies(for: request, now: now) }
    }

    func cookieHeaderValue(for request: CookieRequestURL) -> String? {
        let cookies = cookies(for: request)
        guard !cookies.isEmpty else { return nil }
        // Appended into one string: no array of "name=value" strings to join.
        var value = ""
        for cookie in cookies {
            if !value.isEmpty { value += "; " }
            value += cookie.name
            value += "="
            value += cookie.value
        }
        return value
    }

    /// Parses outside the lock (parsing is the costly part), then stores under it. One reading
    /// of the clock for all lines: the cookies of one response are created at the same time.
    func setCookies(_ values: [String], for request: CookieRequestURL) {
        let now = self.now()
        let parsed = values.compactMap { SetCookieParser.parse($0, now: now) }
        guard !parsed.isEmpty else { return }
        jar.withLock { jar in
            for cookie in parsed { jar.store(cookie, from: request, now: now) }
        }
    }
}
