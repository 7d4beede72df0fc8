import Foundation

/// One cookie as a `CookieStore` keeps it: the RFC 6265 §5.3 storage record, what Foundation
/// calls an HTTPCookie.
///
/// Cookies come only from Set-Cookie lines (a response's, or ones given to
/// `CookieStore.setCookies(fromSetCookieHeaders:for:)`), so every stored cookie went through the
/// RFC's parsing and acceptance rules; there is no initializer that would bypass them.
public struct Cookie: Sendable, Hashable, CustomStringConvertible {
    /// The SameSite attribute (RFC 6265bis §5.4.7).
    ///
    /// Recorded, not enforced: SameSite protects a browser's cross-site requests, and this
    /// client has no notion of the site a request is made from.
    public enum SameSite: String, Sendable, Hashable {
        /// Only for requests from the cookie's own site.
        case strict = "Strict"
        /// Also for top-level navigations to the site from elsewhere.
        case lax = "Lax"
        /// For every request (browsers require Secure with it).
        case none = "None"
    }

    /// The cookie's name (never empty).
    public let name: String
    /// The cookie's value (may be empty).
    public let value: String
    /// The domain it belongs to: lowercased, without a leading dot. The request host for a
    /// host-only cookie, else the Domain attribute.
    public let domain: String
    /// Sent only to exactly `domain` (no Domain attribute was given), not to its subdomains.
    public let isHostOnly: Bool
    /// Sent only to request paths inside this one (§5.1.4 path-match).
    public let path: String
    /// When the cookie stops being sent; nil for a session cookie (no Expires or Max-Age), which
    /// lives as long as its store.
    public let expiresDate: Date?
    /// Sent only over https.
    public let isSecure: Bool
    /// Not for scripts (HttpOnly). Every request this client makes is an HTTP request, so it
    /// changes nothing here; it is kept so that the cookie can be shown or exported faithfully.
    public let isHTTPOnly: Bool
    /// The SameSite attribute; nil when absent or not one of the three known values.
    public let sameSite: SameSite?
    /// When the cookie was first stored. Replacing it with a cookie of the same name, domain
    /// and path keeps this time (§5.3 step 11.3), so the order in the Cookie field is stable.
    public internal(set) var creationTime: Date

    /// A cookie without an expiry date: it lives only as long as its store.
    public var isSessionOnly: Bool { expiresDate == nil }

    /// `name=value`, as it is sent in a Cookie field.
    public var description: String { "\(name)=\(value)" }

    init(name: String, value: String, domain: String, isHostOnly: Bool, path: String, expiresDate: Date?,
         isSecure: Bool, isHTTPOnly: Bool, sameSite: SameSite?, creationTime: Date) {
        self.name = name
        self.value = value
        self.domain = domain
        self.isHostOnly = isHostOnly
        self.path = path
        self.expiresDate = expiresDate
        self.isSecure = isSecure
        self.isHTTPOnly = isHTTPOnly
        self.sameSite = sameSite
        self.creationTime = creationTime
    }

    /// Whether the cookie has expired at `now`.
    func isExpired(at now: Date) -> Bool {
        guard let expiresDate else { return false }
        return expiresDate <= now
    }
}
