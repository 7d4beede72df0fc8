extension NetworkingError {
    /// The public error for a transport failure: the one place `TransportError` becomes a
    /// `NetworkingError`.
    init(_ error: TransportError) {
        switch error {
        case .overrideNotIPLiteral(let host, let address):
            self.init(.dnsFailure, "the address given for \(host), \"\(address)\", is not an IP literal")
        case .resolutionFailed(let host, let status):
            self.init(.dnsFailure, "cannot resolve \(host): \(DNSStatus.describe(status))")
        case .truncatedAnswerTCPRefused(let host):
            self.init(.dnsFailure, "cannot resolve \(host): its DNS answer did not fit in UDP and the retry over TCP could not connect (refused or unreachable)")
        case .nameNotFound(let host):
            self.init(.dnsFailure, "cannot resolve \(host): no such name")
        case .noAddresses(let host):
            self.init(.dnsFailure, "\(host) has no IPv4 or IPv6 address")
        case .resolutionTimedOut(let host, let milliseconds?):
            self.init(.dnsTimeout, "resolving \(host) took longer than \(Double(milliseconds) / 1000) s")
        case .resolutionTimedOut(let host, nil):
            self.init(.dnsTimeout, "resolving \(host) timed out: no DNS server answered")
        case .invalidDNSServer(let entry):
            self.init(.dnsFailure, "the DNS server \"\(entry)\" is not an IP address with an optional port")
        case .resolutionDescriptorsExhausted(let host, let status):
            self.init(.dnsFailure, "cannot resolve \(host): \(UVError.describe(status)): the process has no file descriptor left for the query")

        case .proxyAnswerTooLong(let authority):
            self.init(.proxyConnectFailed, "the proxy's answer to CONNECT \(authority) is not an HTTP response head")
        case .proxyAnswerNotHTTP(let authority, let statusLine):
            self.init(.proxyConnectFailed, "the proxy answered CONNECT \(authority) with \"\(statusLine)\"")
        case .proxyRefused(let authority, let status, let statusLine):
            self.init(status == 407 ? .proxyAuthenticationRequired : .proxyConnectFailed,
                      "the proxy refused CONNECT \(authority): \(statusLine)")
        case .proxyWriteFailed(let status):
            self.init(.proxyConnectFailed, "writing CONNECT to the proxy failed: \(UVError.describe(status))")
        case .proxyClosed(let authority):
            self.init(.proxyConnectFailed, "the proxy closed the connection instead of answering CONNECT \(authority)")
        case .proxySocketFailed(let status):
            self.init(.proxyConnectFailed, "the connection to the proxy failed during CONNECT: \(UVError.describe(status))")

        case .tls(let error):
            self.init(error)

        case .cellularAccessDenied(let host, let reason):
            self.init(.cellularAccessDenied, "cannot reach \(host) without a cellular interface, which the request does not allow: \(reason)")
        }
    }

    /// The public error for a TLS failure (part of the transport's mapping).
    init(_ error: TLSError) {
        switch error {
        case .contextUnavailable(let openSSL):
            self.init(.secureConnectionFailed, Self.withReasons("OpenSSL could not make a TLS context", openSSL))
        case .configuration(let error), .untrusted(let error):
            self.init(error)
        case .connectionUnavailable(let openSSL):
            self.init(.secureConnectionFailed, Self.withReasons("OpenSSL could not make a TLS connection", openSSL))
        case .closedDuringHandshake(let host):
            self.init(.secureConnectionFailed, "\(host) closed the connection during the TLS handshake")
        case .pausedWithoutCertificate(let host):
            self.init(.secureConnectionFailed, "TLS handshake with \(host) paused without a certificate")
        case .clientCertificateRequired(let host, let openSSL):
            self.init(.clientCertificateRequired, "\(host) requires a client certificate (\(openSSL))")
        case .clientCertificateRejected(let host, let openSSL):
            self.init(.clientCertificateRejected, "\(host) rejected the client certificate (\(openSSL))")
        case .failed(let phase, let host, let openSSL):
            self.init(.secureConnectionFailed, "TLS \(phase.rawValue) with \(host) failed: \(openSSL)")
        case .socketFailedDuringHandshake(let host, let status):
            self.init(.secureConnectionFailed, "the connection to \(host) failed during the TLS handshake: \(UVError.describe(status))")
        }
    }
}
