#if canImport(Glibc)
import Glibc
#endif

/// The matching rules of RFC 6265 §5.1.3 (domains) and §5.1.4 (paths).
enum CookieMatching {
    /// §5.1.3: `host` domain-matches `domain` when they are identical, or when `domain` is a
    /// suffix of `host` that starts right after a "." and `host` is a name, not an IP address
    /// ("1.2.3.4" must not match a cookie for "3.4"). Both are canonical (lowercase); they are
    /// compared as bytes.
    static func domainMatches(_ host: String, _ domain: String) -> Bool {
        let hostBytes = host.utf8, domainBytes = domain.utf8
        if hostBytes.elementsEqual(domainBytes) { return true }
        guard hostBytes.count > domainBytes.count, hostBytes.reversed().starts(with: domainBytes.reversed()) else { return false }
        let boundary = hostBytes.index(hostBytes.endIndex, offsetBy: -(domainBytes.count + 1))
        return hostBytes[boundary] == UInt8(ascii: ".") && !isIPAddress(host)
    }

    /// Whether `host` is an IPv4 or IPv6 literal (without brackets).
    static func isIPAddress(_ host: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }

    /// §5.1.4 default-path: the request path up to, not including, its last "/"; "/" when that
    /// leaves nothing (or the path is not absolute).
    static func defaultPath(_ requestPath: String) -> String {
        let bytes = requestPath.utf8
        guard bytes.first == UInt8(ascii: "/"), let lastSlash = bytes.lastIndex(of: UInt8(ascii: "/")),
              lastSlash != bytes.startIndex else {
            return "/"
        }
        return String(requestPath[..<lastSlash])
    }

    /// §5.1.4 path-match: identical, or `cookiePath` is a prefix of `requestPath` that ends
    /// with "/" or is followed there by "/" ("/docs" matches "/docs/a" but not "/docsx").
    static func pathMatches(_ requestPath: String, _ cookiePath: String) -> Bool {
        // Bytes, not Characters: Unicode equivalence has no place in comparing paths.
        let request = requestPath.utf8, cookie = cookiePath.utf8
        guard request.starts(with: cookie) else { return false }
        if request.count == cookie.count || cookie.last == UInt8(ascii: "/") { return true }
        return request[request.index(request.startIndex, offsetBy: cookie.count)] == UInt8(ascii: "/")
    }
}
