import COpenSSL

extension Certificate {
    /// The start of the validity period as OpenSSL prints it ("Jan  1 00:00:00 2030 GMT"), for
    /// failure reasons.
    var notBeforeText: String { Self.text(of: X509_get0_notBefore(x509)) }

    /// The end of the validity period as OpenSSL prints it, for failure reasons.
    var notAfterText: String { Self.text(of: X509_get0_notAfter(x509)) }

    private static func text(of time: UnsafePointer<ASN1_TIME>?) -> String {
        guard let time else { return "?" }
        let output = MemoryBIO()
        guard ASN1_TIME_print(output.bio, time) == 1 else {
            OpenSSLErrorQueue.drain()
            return "?"
        }
        return output.string
    }
}
