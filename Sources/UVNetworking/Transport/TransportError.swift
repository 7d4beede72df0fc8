/// What went wrong below HTTP: resolving the host, the proxy's CONNECT tunnel, or TLS. Socket
/// failures travel as libuv statuses (`TransportDelegate`'s `didFailToConnect` and
/// `didFailWith`), which the connection above names. The session maps it
/// (`NetworkingError+Transport.swift`).
enum TransportError: Error {
    // DNS.
    /// A host override (`--resolve`) names something that is not an IP literal.
    case overrideNotIPLiteral(host: String, address: String)
    /// The look-up failed with this c-ares status (SERVFAIL, refused, a malformed answer, ...).
    case resolutionFailed(host: String, status: Int32)
    /// The server's answer over UDP was truncated (TC: it did not fit) and the retry over TCP
    /// that RFC 7766 calls for could not connect (refused, as behind a firewall that lets only
    /// UDP/53 through, or unreachable). The failure of this host's look-up alone (issue #34).
    case truncatedAnswerTCPRefused(host: String)
    /// The name does not exist (NXDOMAIN, or an .invalid name).
    case nameNotFound(host: String)
    /// The name exists but has no IPv4 or IPv6 address.
    case noAddresses(host: String)
    /// No answer within the look-up timeout (`dnsTimeout`), or c-ares gave up after the tries
    /// resolv.conf allows.
    case resolutionTimedOut(host: String, milliseconds: UInt64?)
    /// `dnsServers` holds an entry that is not an IP address with an optional port.
    case invalidDNSServer(entry: String)
    /// No socket could be opened for the query for want of a file descriptor (EMFILE, ENFILE:
    /// this libuv status). The pool makes room as for a connect (`ConnectionPool`).
    case resolutionDescriptorsExhausted(host: String, status: Int32)

    // The proxy's CONNECT tunnel to `authority` (the origin's "host:port").
    /// The proxy sent more than a response head's worth of bytes without ending a head.
    case proxyAnswerTooLong(authority: String)
    /// The proxy's status line is not HTTP/1.x.
    case proxyAnswerNotHTTP(authority: String, statusLine: String)
    /// The proxy answered with a status other than 2xx.
    case proxyRefused(authority: String, status: Int, statusLine: String)
    case proxyWriteFailed(status: Int32)
    case proxyClosed(authority: String)
    case proxySocketFailed(status: Int32)

    case tls(TLSError)

    /// The request refuses cellular (`Request.allowsCellularAccess` false) and no address of
    /// `host` can be reached without it; `reason` says why, address by address.
    case cellularAccessDenied(host: String, reason: String)
}
