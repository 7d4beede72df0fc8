import Foundation

/// Which HTTP proxy a session's requests go through, like curl's proxy options: one for http
/// URLs (requests in absolute form), one for https URLs (a CONNECT tunnel, TLS inside it), and
/// hosts that go direct.
public struct ProxyConfiguration: Sendable, Hashable {
    /// The proxy for http URLs (`http://[user:password@]host[:port]`; port 1080 by default, as
    /// curl's). nil: direct.
    public var httpProxy: URL?
    /// The proxy for https URLs, reached in clear with CONNECT. nil: direct.
    public var httpsProxy: URL?
    /// Hosts that never use a proxy, as curl's no_proxy: "*" for all, a name matching itself
    /// and its subdomains ("example.com" and ".example.com" both match "a.example.com", and a
    /// trailing dot on either side is ignored), or an IP literal.
    public var noProxy: [String]
    /// Whether loopback hosts (localhost, 127.0.0.0/8, ::1) go direct whatever the lists say.
    /// On for `environment()`, as Go's net/http does: a proxy elsewhere cannot reach this
    /// machine's loopback, and tests and local services expect to reach it.
    public var bypassesLoopback: Bool

    /// Explicit proxies.
    public init(httpProxy: URL? = nil, httpsProxy: URL? = nil, noProxy: [String] = [], bypassesLoopback: Bool = false) {
        self.httpProxy = httpProxy
        self.httpsProxy = httpsProxy
        self.noProxy = noProxy
        self.bypassesLoopback = bypassesLoopback
    }

    /// No proxy at all.
    public static let none = ProxyConfiguration()

    /// The proxies the environment names, read as curl reads them: `http_proxy` (lowercase only:
    /// an HTTP_PROXY variable can be set by a CGI request's Proxy header), `https_proxy` or
    /// `HTTPS_PROXY`, `all_proxy` or `ALL_PROXY` for either when unset, and `no_proxy` or
    /// `NO_PROXY`. A value without a scheme is taken as http://. Loopback hosts go direct.
    public static func environment(_ variables: [String: String] = ProcessInfo.processInfo.environment) -> ProxyConfiguration {
        func value(_ names: String...) -> String? {
            names.lazy.compactMap { variables[$0] }.first { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
        }
        func url(_ text: String?) -> URL? {
            guard let text = text?.trimmingCharacters(in: .whitespaces) else { return nil }
            return URL(string: text.contains("://") ? text : "http://" + text)
        }
        let all = value("all_proxy", "ALL_PROXY")
        let noProxy = (value("no_proxy", "NO_PROXY") ?? "").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        return ProxyConfiguration(httpProxy: url(value("http_proxy") ?? all),
                                  httpsProxy: url(value("https_proxy", "HTTPS_PROXY") ?? all),
                                  noProxy: noProxy, bypassesLoopback: true)
    }

    /// The proxy for a request to `host` over `scheme`, or nil for a direct connection.
    func proxy(forScheme scheme: String, host: String) -> ProxyEndpoint? {
        guard let url = scheme == "https" ? httpsProxy : httpProxy, let proxyHost = url.host, !proxyHost.isEmpty else { return nil }
        let lowered = host.lowercased()
        if bypassesLoopback && Self.isLoopback(lowered) { return nil }
        if noProxy.contains(where: { Self.matches(pattern: $0, host: lowered) }) { return nil }
        var authorization: String?
        // As written in the URL, decoded once here (Foundation's `user` is already decoded).
        if let user = url.user(percentEncoded: true) {
            authorization = URLCredentials.basic(user: user, password: url.password(percentEncoded: true))
        }
        let bracketless = proxyHost.hasPrefix("[") ? String(proxyHost.dropFirst().dropLast()) : proxyHost
        return ProxyEndpoint(host: bracketless, port: url.port ?? 1080, authorization: authorization)
    }

    /// curl's rules: a trailing dot is ignored on both sides ("example.com." is the same name as
    /// "example.com", fully qualified), a leading dot on the pattern too. An IPv6 pattern's
    /// brackets come off first, so that the dot rules see what is inside them as any pattern's.
    private static func matches(pattern: String, host: String) -> Bool {
        if pattern == "*" { return true }
        var domain = pattern.lowercased()
        if domain.hasPrefix("[") && domain.hasSuffix("]") { domain = String(domain.dropFirst().dropLast()) }
        if domain.hasSuffix(".") { domain.removeLast() }
        if domain.hasPrefix(".") { domain.removeFirst() }
        guard !domain.isEmpty else { return false }
        let name = host.hasSuffix(".") ? host.dropLast() : host[...]
        return name == domain || name.hasSuffix("." + domain)
    }

    private static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host.hasSuffix(".localhost") || host == "::1" || host.hasPrefix("127.")
            && host.split(separator: ".").count == 4 && host.split(separator: ".").allSatisfy { UInt8($0) != nil }
    }
}

/// A proxy a pool's connections go through.
struct ProxyEndpoint: Hashable, Sendable {
    var host: String
    var port: Int
    /// The Proxy-Authorization value (Basic), from the proxy URL's user and password.
    var authorization: String?
}
