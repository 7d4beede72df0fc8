/// How much a `CookieStore` keeps, so that servers cannot make it grow without bound. The
/// defaults are RFC 6265 §6.1's minimums for a user agent, which are also what browsers keep.
struct CookieLimits: Sendable {
    /// Cookies with the same domain. Past it, the least recently used of that domain goes.
    var cookiesPerDomain = 50
    /// Cookies in the whole store. Past it, the least recently used anywhere goes.
    var cookies = 3000
    /// Bytes of name plus value; a longer cookie is refused (RFC 6265bis §5.6 uses 4096 too).
    /// With domain and path capped at 1024 bytes each (the attribute limit), a full store holds
    /// at most about 3000 × 6 KiB, 18 MiB, of cookie text; a typical one, far less.
    var nameAndValueBytes = 4096

    static let standard = CookieLimits()
}
