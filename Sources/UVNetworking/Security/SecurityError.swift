/// What went wrong in the security layer: a certificate, client identity or trust store that
/// could not be loaded, or a server's chain that was not trusted. Each case carries what the
/// layer knew (paths, subjects, OpenSSL's reasons, the chain presented); the session maps it to
/// `NetworkingError` (`NetworkingError+Security.swift`), and so do the public loading functions,
/// at their own boundary.
enum SecurityError: Error {
    /// Why a PEM private key could not be read.
    enum KeyProblem: Sendable {
        case encryptedWithoutPassword
        case wrongPasswordOrDamaged
        case noPEMKey
    }

    // Certificates.
    /// The bytes are not exactly one DER certificate.
    case notDERCertificate(byteCount: Int, openSSL: String)
    /// The PEM text holds no certificate block.
    case noPEMCertificate(openSSL: String)
    /// The PEM block numbered `index` (from 1) is damaged.
    case damagedPEMCertificate(index: Int, openSSL: String)
    /// OpenSSL read the certificate but cannot read back its own encoding of it, or reads it
    /// to other bytes: a BER form it accepts and writes differently (see `Certificate.derData`).
    case certificateDoesNotReadBack(subject: String)

    // Client identities.
    /// The identity's certificate could not be read (`cause` is the certificate's own error).
    indirect case identityCertificateUnreadable(source: String, cause: SecurityError)
    case privateKeyUnreadable(source: String, problem: KeyProblem, openSSL: String)
    case identityFileUnreadable(role: String, path: String, cause: any Error)
    case keyDoesNotMatchCertificate(source: String, subject: String, openSSL: String)
    case notPKCS12(source: String, openSSL: String)
    case pkcs12Unopenable(source: String, openSSL: String)
    case pkcs12Incomplete(source: String)
    /// OpenSSL refused the identity's certificate, a chain certificate or the key for a context.
    case certificateRefused(subject: String, openSSL: String)
    case chainCertificateRefused(subject: String, openSSL: String)
    case privateKeyRefused(subject: String, openSSL: String)

    // Trust stores.
    case systemCAsUnloadable(openSSL: String)
    case caFileUnreadable(path: String)
    case caFileHoldsNoCertificate(path: String, openSSL: String)
    case caDirectoryMissing(path: String)
    case caDirectoryUnloadable(path: String, openSSL: String)

    // Trust evaluation.
    /// The policy or the challenge handler refused the chain `trust` presented on `port`.
    case untrusted(ServerTrust, port: Int, reason: String, cause: (any Error)?)
    /// The authentication challenge handler cancelled the connection to `host`.
    case challengeCancelled(host: String)
}
