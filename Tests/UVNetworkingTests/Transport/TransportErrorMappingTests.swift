import CUV
import Testing
@testable import UVNetworking

/// Each `TransportError` and `TLSError` becomes the `NetworkingError` the public API has always
/// reported.
@Suite(.tags(.unit)) struct TransportErrorMappingTests {
    static let reset = UV_ECONNRESET.rawValue
    static let resetText = "ECONNRESET (connection reset by peer)"

    @Test(arguments: [
        (TransportError.overrideNotIPLiteral(host: "a.test", address: "b.test"), NetworkingError.Code.dnsFailure,
         "the address given for a.test, \"b.test\", is not an IP literal"),
        (.resolutionFailed(host: "a.test", status: 3), .dnsFailure,  // ARES_ESERVFAIL
         "cannot resolve a.test: DNS server returned general failure"),
        (.truncatedAnswerTCPRefused(host: "a.test"), .dnsFailure,
         "cannot resolve a.test: its DNS answer did not fit in UDP and the retry over TCP could not connect (refused or unreachable)"),
        (.nameNotFound(host: "a.test"), .dnsFailure, "cannot resolve a.test: no such name"),
        (.noAddresses(host: "a.test"), .dnsFailure, "a.test has no IPv4 or IPv6 address"),
        (.resolutionTimedOut(host: "a.test", milliseconds: 2500), .dnsTimeout, "resolving a.test took longer than 2.5 s"),
        (.resolutionTimedOut(host: "a.test", milliseconds: nil), .dnsTimeout, "resolving a.test timed out: no DNS server answered"),
        (.invalidDNSServer(entry: "1.2.3"), .dnsFailure, "the DNS server \"1.2.3\" is not an IP address with an optional port"),
        (.proxyAnswerTooLong(authority: "o.test:443"), .proxyConnectFailed,
         "the proxy's answer to CONNECT o.test:443 is not an HTTP response head"),
        (.proxyAnswerNotHTTP(authority: "o.test:443", statusLine: "SSH-2.0"), .proxyConnectFailed,
         "the proxy answered CONNECT o.test:443 with \"SSH-2.0\""),
        (.proxyRefused(authority: "o.test:443", status: 403, statusLine: "HTTP/1.1 403 Forbidden"), .proxyConnectFailed,
         "the proxy refused CONNECT o.test:443: HTTP/1.1 403 Forbidden"),
        (.proxyRefused(authority: "o.test:443", status: 407, statusLine: "HTTP/1.1 407 Who"), .proxyAuthenticationRequired,
         "the proxy refused CONNECT o.test:443: HTTP/1.1 407 Who"),
        (.proxyWriteFailed(status: reset), .proxyConnectFailed, "writing CONNECT to the proxy failed: \(resetText)"),
        (.proxyClosed(authority: "o.test:443"), .proxyConnectFailed,
         "the proxy closed the connection instead of answering CONNECT o.test:443"),
        (.proxySocketFailed(status: reset), .proxyConnectFailed, "the connection to the proxy failed during CONNECT: \(resetText)"),
        (.cellularAccessDenied(host: "o.test", reason: "192.0.2.9: only cellular interfaces (wwan0) have a route to it"), .cellularAccessDenied,
         "cannot reach o.test without a cellular interface, which the request does not allow: 192.0.2.9: only cellular interfaces (wwan0) have a route to it"),
        (.tls(.contextUnavailable(openSSL: "malloc failure")), .secureConnectionFailed,
         "OpenSSL could not make a TLS context (malloc failure)"),
        (.tls(.configuration(.caDirectoryMissing(path: "/cas"))), .invalidCertificate, "the CA directory /cas does not exist"),
        (.tls(.connectionUnavailable(openSSL: "")), .secureConnectionFailed, "OpenSSL could not make a TLS connection"),
        (.tls(.closedDuringHandshake(host: "o.test")), .secureConnectionFailed, "o.test closed the connection during the TLS handshake"),
        (.tls(.pausedWithoutCertificate(host: "o.test")), .secureConnectionFailed,
         "TLS handshake with o.test paused without a certificate"),
        (.tls(.clientCertificateRequired(host: "o.test", openSSL: "tlsv13 alert certificate required")), .clientCertificateRequired,
         "o.test requires a client certificate (tlsv13 alert certificate required)"),
        (.tls(.clientCertificateRejected(host: "o.test", openSSL: "sslv3 alert bad certificate")), .clientCertificateRejected,
         "o.test rejected the client certificate (sslv3 alert bad certificate)"),
        (.tls(.failed(.handshake, host: "o.test", openSSL: "wrong version number")), .secureConnectionFailed,
         "TLS handshake with o.test failed: wrong version number"),
        (.tls(.failed(.read, host: "o.test", openSSL: "decryption failed")), .secureConnectionFailed,
         "TLS read with o.test failed: decryption failed"),
        (.tls(.socketFailedDuringHandshake(host: "o.test", status: reset)), .secureConnectionFailed,
         "the connection to o.test failed during the TLS handshake: \(resetText)"),
        (.tls(.untrusted(.challengeCancelled(host: "o.test"))), .cancelled,
         "the authentication challenge handler cancelled the connection to o.test"),
    ] as [(TransportError, NetworkingError.Code, String)])
    func mapsToCodeAndDetail(_ error: TransportError, code: NetworkingError.Code, detail: String) {
        let mapped = NetworkingError(error)
        #expect(mapped.code == code)
        #expect(mapped.detail == detail)
        #expect(mapped.failingURL == nil && mapped.underlyingError == nil && mapped.serverTrust == nil)
    }

    @Test func untrustedChainKeepsItsTrust() {
        let trust = TestPKI.standard.trust(TestPKI.standard.sentChain)
        let mapped = NetworkingError(TransportError.tls(.untrusted(.untrusted(trust, port: 443, reason: "r", cause: nil))))
        #expect(mapped.code == .serverCertificateUntrusted)
        #expect(mapped.serverTrust === trust)
        #expect(mapped.failingURL?.absoluteString == "https://localhost:443/")
    }
}
