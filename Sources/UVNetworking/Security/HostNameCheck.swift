#if canImport(Glibc)
import Glibc
#endif
import COpenSSL

/// Checks a server certificate's names against the host connected to, as RFC 6125 and RFC 2818
/// ask of HTTPS clients.
///
/// - DNS names match subjectAltName dNSName entries only: the subject's common name is never
///   consulted (`X509_CHECK_FLAG_NEVER_CHECK_SUBJECT`), so a certificate without a DNS name
///   matches no host. Case is ignored; one trailing dot on the host is ignored.
/// - A wildcard must be the whole left-most label (`*.example.test` matches `a.example.test`,
///   not `a.b.example.test` nor `example.test`); partial wildcards such as `f*.example.test`
///   match nothing (`X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS`).
/// - IPv4 and IPv6 literals (brackets and a zone suffix allowed) match iPAddress entries only,
///   compared as addresses: a dNSName "127.0.0.1" does not match the address 127.0.0.1.
enum HostNameCheck {
    /// Why `host` is not a name of `certificate`; nil when it is.
    static func mismatch(of certificate: Certificate, host: String) -> String? {
        let matched = withExtendedLifetime(certificate) { matches(certificate.x509, host: host) }
        OpenSSLErrorQueue.drain()
        guard !matched else { return nil }
        let names = certificate.subjectAlternativeNames
        guard !names.isEmpty else {
            return "host name mismatch: \(host) is not checked against the certificate's common name "
                + "(\"\(certificate.subjectSummary)\") and it lists no DNS name or IP address"
        }
        return "host name mismatch: the certificate is for \(names.joined(separator: ", ")), not \(host)"
    }

    private static func matches(_ x509: OpaquePointer, host: String) -> Bool {
        var name = Substring(host)
        if name.hasPrefix("["), name.hasSuffix("]") { name = name.dropFirst().dropLast() }
        if let address = ipLiteral(name) {
            return X509_check_ip_asc(x509, address, 0) == 1
        }
        if name.hasSuffix(".") { name = name.dropLast() }
        // An empty label is no host name; X509_check_host would even read a leading dot as
        // "any host in this domain".
        guard !name.isEmpty, !name.split(separator: ".", omittingEmptySubsequences: false).contains(where: \.isEmpty) else {
            return false
        }
        let flags = UInt32(X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS | X509_CHECK_FLAG_NEVER_CHECK_SUBJECT)
        let text = String(name)
        return X509_check_host(x509, text, text.utf8.count, flags, nil) == 1
    }

    /// The address part of an IPv4 or IPv6 literal (an IPv6 zone such as "%eth0" removed:
    /// certificates carry no zones); nil for anything else, which is then a DNS name.
    private static func ipLiteral(_ name: Substring) -> String? {
        var ipv4 = in_addr()
        if inet_pton(AF_INET, String(name), &ipv4) == 1 { return String(name) }
        let address = String(name.prefix { $0 != "%" })
        var ipv6 = in6_addr()
        if inet_pton(AF_INET6, address, &ipv6) == 1 { return address }
        return nil
    }
}
