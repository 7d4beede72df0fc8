import Foundation

/// What the cookie rules need from a request URL: the canonical host (§5.1.2), the path
/// without its query, and whether the request goes over a secure channel.
struct CookieRequestURL {
    /// Lowercased. Hosts are ASCII here (the request encoder refuses others), so lowercasing is
    /// the whole of §5.1.2's canonicalization.
    var host: String
    /// The path as written in the URL (percent-escapes kept), without query or fragment.
    var path: String
    /// https: the only scheme this client treats as secure.
    var isSecure: Bool

    /// The parts of an already-parsed request target.
    init(_ target: RequestTarget) {
        host = target.host.lowercased()
        let pathBytes = target.path.utf8
        if let query = pathBytes.firstIndex(of: UInt8(ascii: "?")) {
            path = String(target.path[..<query])
        } else {
            path = target.path
        }
        isSecure = target.scheme == "https"
    }

    /// The parts of `url`; nil unless it is an absolute http or https URL with a host.
    init?(_ url: URL) {
        guard let target = try? RequestTarget(absoluteURL: url.absoluteString) else { return nil }
        self.init(target)
    }
}
