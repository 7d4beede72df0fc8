import COpenSSL

extension ClientIdentity {
    /// Makes `sslContext` (an SSL_CTX) present this identity when a server asks for a client
    /// certificate: the certificate, its chain and its key. Replaces any chain set before.
    ///
    /// - Throws: `.certificateRefused`, `.chainCertificateRefused` or `.privateKeyRefused` when
    ///   OpenSSL refuses the certificate or key (for
    ///   example a key too weak for the context's security level).
    func apply(to sslContext: OpaquePointer) throws(SecurityError) {
        try withExtendedLifetime((certificate, chain, privateKey)) { () throws(SecurityError) in
            guard SSL_CTX_use_certificate(sslContext, certificate.x509) == 1 else {
                throw .certificateRefused(subject: certificate.subjectSummary, openSSL: OpenSSLErrorQueue.drain())
            }
            // The chain belongs to the certificate just set; clear what a previous one left.
            _ = uvn_SSL_CTX_clear_chain_certs(sslContext)
            for intermediate in chain where uvn_SSL_CTX_add1_chain_cert(sslContext, intermediate.x509) != 1 {
                throw .chainCertificateRefused(subject: intermediate.subjectSummary, openSSL: OpenSSLErrorQueue.drain())
            }
            guard SSL_CTX_use_PrivateKey(sslContext, privateKey.key) == 1,
                  SSL_CTX_check_private_key(sslContext) == 1 else {
                throw .privateKeyRefused(subject: certificate.subjectSummary, openSSL: OpenSSLErrorQueue.drain())
            }
        }
        // Accepted, yet OpenSSL may have queued a reason on the way (an extension it could not
        // read when it first looked at the certificate's extensions, which it tolerates): it
        // must not turn up in the detail of the next, unrelated error on this thread.
        OpenSSLErrorQueue.drain()
    }
}
