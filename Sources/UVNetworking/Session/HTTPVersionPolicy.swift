/// Which HTTP versions a session speaks (`SessionConfiguration.httpVersion`), named after
/// curl's options.
public enum HTTPVersionPolicy: Sendable, Hashable {
    /// HTTP/2 where the server agrees: https offers "h2" then "http/1.1" through ALPN; http
    /// speaks HTTP/1.1 (there is no h2c Upgrade: RFC 9113 deprecates it).
    case http2
    /// HTTP/1.1 only: https offers only "http/1.1".
    case http1_1
    /// HTTP/2 on http too, by prior knowledge (h2c: the connection starts with HTTP/2's preface,
    /// RFC 9113 §3.3). For servers known to speak it; one that does not fails the request.
    /// https negotiates through ALPN as with `.http2`.
    case http2PriorKnowledge
}
