import Foundation

/// The cookies of a `CookieStore` and the RFC 6265 rules that change or read them: the storage
/// model (§5.3) and the retrieval for a request (§5.4). A value with no lock and no clock: the
/// store serializes access and passes the time in.
///
/// Cookies are grouped by their domain, so the cookies for a request are found by looking up
/// the host and each of its parent domains, not by scanning the store.
struct CookieJar {
    /// A stored cookie and its bookkeeping.
    struct Entry {
        var cookie: Cookie
        /// When it was first stored, as a tick: orders cookies created in the same instant.
        var creationTick: UInt64
        /// When it was last stored or sent, as a tick: eviction takes the smallest. A counter
        /// rather than the last-access time of §5.3, so that ties cannot happen.
        var lastUsedTick: UInt64
    }

    let limits: CookieLimits
    /// Entries by cookie domain.
    private(set) var entries: [String: [Entry]] = [:]
    private(set) var count = 0
    /// Secure cookies stored: while there are none, a cookie set over http needs no check
    /// against them.
    private var secureCount = 0
    private var tick: UInt64 = 0

    init(limits: CookieLimits) {
        self.limits = limits
    }

    private mutating func nextTick() -> UInt64 {
        tick += 1
        return tick
    }

    // MARK: Storing (§5.3)

    /// Applies §5.3 to a parsed Set-Cookie line received for `request`: stores it, replaces the
    /// cookie it names, deletes that cookie (when it arrives expired), or ignores it.
    mutating func store(_ parsed: SetCookie, from request: CookieRequestURL, now: Date) {
        guard parsed.name.utf8.count + parsed.value.utf8.count <= limits.nameAndValueBytes else { return }
        guard let (domain, isHostOnly) = Self.domain(of: parsed, from: request) else { return }
        // Step 7.
        let path = parsed.path ?? CookieMatching.defaultPath(request.path)
        guard Self.prefixRulesAllow(parsed, isHostOnly: isHostOnly, path: path) else { return }
        // RFC 6265bis §5.6 steps 14 and 16: only a secure channel may set a Secure cookie, or
        // overwrite, shadow or delete one ("leave secure cookies alone"). Otherwise a network
        // attacker on plain http could replace the session cookie of the https site.
        if parsed.isSecure && !request.isSecure { return }
        if !request.isSecure && shadowsSecureCookie(named: parsed.name, domain: domain, path: path) { return }

        var cookie = Cookie(name: parsed.name, value: parsed.value, domain: domain, isHostOnly: isHostOnly, path: path,
                            expiresDate: parsed.expiryTime, isSecure: parsed.isSecure, isHTTPOnly: parsed.isHTTPOnly,
                            sameSite: parsed.sameSite, creationTime: now)
        var creationTick: UInt64?
        // Step 11: one cookie per name, domain and path; the new one keeps the old one's creation.
        if let index = entries[domain]?.firstIndex(where: { $0.cookie.name == cookie.name && $0.cookie.path == path }) {
            let old = removeEntry(domain: domain, at: index)
            cookie.creationTime = old.cookie.creationTime
            creationTick = old.creationTick
        }
        // An expired cookie is evicted as soon as it is stored: that is how a server deletes one.
        guard !cookie.isExpired(at: now) else { return }
        let used = nextTick()
        entries[domain, default: []].append(Entry(cookie: cookie, creationTick: creationTick ?? used, lastUsedTick: used))
        count += 1
        if cookie.isSecure { secureCount += 1 }
        enforceLimits(after: domain, now: now)
    }

    /// Steps 4 to 6: the cookie's domain and host-only flag, or nil to ignore the cookie.
    ///
    /// Without a public suffix list (step 5), a Domain attribute without a dot ("com",
    /// "localhost") is taken for a public suffix: accepted, as a host-only cookie, only from
    /// that very host. Multi-label suffixes ("co.uk") cannot be told apart from a site's domain
    /// and are accepted.
    private static func domain(of parsed: SetCookie, from request: CookieRequestURL) -> (String, Bool)? {
        guard let domain = parsed.domain, !domain.isEmpty else { return (request.host, true) }
        if !domain.utf8.contains(UInt8(ascii: ".")) {
            guard domain == request.host else { return nil }
            return (request.host, true)
        }
        guard CookieMatching.domainMatches(request.host, domain) else { return nil }
        // An IP address domain-matches only itself: its cookie is host-only (RFC 6265bis).
        return (domain, CookieMatching.isIPAddress(domain))
    }

    /// RFC 6265bis §4.1.3 name prefixes, matched case-insensitively: "__Secure-" cookies must
    /// be Secure; "__Host-" cookies must be Secure, host-only and for the path "/".
    private static func prefixRulesAllow(_ parsed: SetCookie, isHostOnly: Bool, path: String) -> Bool {
        let name = parsed.name.utf8
        if name.count >= 9, parsed.name.prefix(9).lowercased() == "__secure-" { return parsed.isSecure }
        if name.count >= 7, parsed.name.prefix(7).lowercased() == "__host-" { return parsed.isSecure && isHostOnly && path == "/" }
        return true
    }

    /// Whether a Secure cookie of that name exists whose domain domain-matches `domain` or the
    /// other way round, and whose path `path` path-matches (RFC 6265bis §5.6 step 16).
    private func shadowsSecureCookie(named name: String, domain: String, path: String) -> Bool {
        guard secureCount > 0 else { return false }
        // Every domain, since the stored one may be a parent or a child of `domain`; the cheap
        // tests first.
        for (storedDomain, list) in entries {
            for entry in list where entry.cookie.isSecure && entry.cookie.name == name
                && CookieMatching.pathMatches(path, entry.cookie.path)
                && (CookieMatching.domainMatches(storedDomain, domain) || CookieMatching.domainMatches(domain, storedDomain)) {
                return true
            }
        }
        return false
    }

    // MARK: Retrieving (§5.4)

    /// The cookies to send to `request`, in Cookie-field order: longer paths first, then
    /// earlier creation. Marks them used (step 3) and drops expired cookies met on the way.
    mutating func cookies(for request: CookieRequestURL, now: Date) -> [Cookie] {
        guard count > 0 else { return [] }
        var matched: [Entry] = []
        var sawExpired = false
        var domain = Substring(request.host)
        let isIP = CookieMatching.isIPAddress(request.host)
        while true {
            let key = String(domain)
            // Through the dictionary's index, so marking a cookie used changes it in place
            // instead of copying its domain's list.
            if let position = entries.index(forKey: key) {
                for index in entries.values[position].indices {
                    let entry = entries.values[position][index]
                    if entry.cookie.isExpired(at: now) { sawExpired = true; continue }
                    guard !entry.cookie.isHostOnly || key == request.host,
                          !entry.cookie.isSecure || request.isSecure,
                          CookieMatching.pathMatches(request.path, entry.cookie.path) else { continue }
                    entries.values[position][index].lastUsedTick = nextTick()
                    matched.append(entry)
                }
            }
            // The parent domain: what follows the next dot. An IP address has none.
            guard !isIP, let dot = domain.utf8.firstIndex(of: UInt8(ascii: ".")) else { break }
            domain = domain[domain.utf8.index(after: dot)...]
        }
        if sawExpired { removeExpired(now: now) }
        matched.sort { left, right in
            let leftLength = left.cookie.path.utf8.count, rightLength = right.cookie.path.utf8.count
            if leftLength != rightLength { return leftLength > rightLength }
            if left.cookie.creationTime != right.cookie.creationTime { return left.cookie.creationTime < right.cookie.creationTime }
            return left.creationTick < right.creationTick
        }
        return matched.map(\.cookie)
    }

    /// Every unexpired cookie, oldest first.
    func allCookies(now: Date) -> [Cookie] {
        entries.values.joined().filter { !$0.cookie.isExpired(at: now) }
            .sorted { $0.creationTick < $1.creationTick }.map(\.cookie)
    }

    // MARK: Removing

    /// Removes the cookie with the name, domain and path of `cookie`, if stored.
    mutating func remove(_ cookie: Cookie) {
        guard let index = entries[cookie.domain]?.firstIndex(where: { $0.cookie.name == cookie.name && $0.cookie.path == cookie.path }) else {
            return
        }
        removeEntry(domain: cookie.domain, at: index)
    }

    /// Removes every cookie for which `shouldRemove` is true.
    mutating func removeAll(where shouldRemove: (Cookie) -> Bool) {
        for domain in Array(entries.keys) {
            entries[domain]!.removeAll { shouldRemove($0.cookie) }
            if entries[domain]!.isEmpty { entries[domain] = nil }
        }
        count = 0
        secureCount = 0
        for entry in entries.values.joined() {
            count += 1
            if entry.cookie.isSecure { secureCount += 1 }
        }
    }

    mutating func removeExpired(now: Date) {
        removeAll { $0.isExpired(at: now) }
    }

    @discardableResult
    mutating func removeEntry(domain: String, at index: Int) -> Entry {
        let entry = entries[domain]!.remove(at: index)
        if entries[domain]!.isEmpty { entries[domain] = nil }
        count -= 1
        if entry.cookie.isSecure { secureCount -= 1 }
        return entry
    }
}
