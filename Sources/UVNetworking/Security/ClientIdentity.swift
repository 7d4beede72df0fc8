import COpenSSL
import Foundation

/// A client certificate and its private key, presented to servers that ask for one (mutual
/// TLS). Load one from PEM (`pem(certificate:privateKey:password:)`) or PKCS#12
/// (`pkcs12(_:password:)`); loading checks that the key belongs to the certificate.
public struct ClientIdentity: Sendable {
    /// The client's certificate (the leaf).
    public let certificate: Certificate
    /// Intermediate certificates sent after the leaf, so that a server that trusts only the
    /// root can build the chain.
    public let chain: [Certificate]
    /// The private key of `certificate`.
    let privateKey: PrivateKeyReference

    /// Pairs a certificate with its key.
    ///
    /// - Throws: `.keyDoesNotMatchCertificate` when the key is not the certificate's; `source`
    ///   names what was loaded, for the detail.
    init(certificate: Certificate, chain: [Certificate], privateKey: PrivateKeyReference,
         source: String) throws(SecurityError) {
        let matches = withExtendedLifetime((certificate, privateKey)) {
            X509_check_private_key(certificate.x509, privateKey.key) == 1
        }
        guard matches else {
            throw .keyDoesNotMatchCertificate(source: source, subject: certificate.subjectSummary,
                                              openSSL: OpenSSLErrorQueue.drain())
        }
        self.certificate = certificate
        self.chain = chain
        self.privateKey = privateKey
    }
}
