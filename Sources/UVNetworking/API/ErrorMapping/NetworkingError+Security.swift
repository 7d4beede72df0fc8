import Foundation

extension NetworkingError {
    /// The public error for a security-layer failure: the one place `SecurityError` becomes a
    /// `NetworkingError`, for the session and for the public loading functions alike.
    init(_ error: SecurityError) {
        switch error {
        case .notDERCertificate(let byteCount, let openSSL):
            self.init(.invalidCertificate, Self.withReasons("the data is not a DER X.509 certificate (\(byteCount) bytes)", openSSL))
        case .noPEMCertificate(let openSSL):
            self.init(.invalidCertificate, Self.withReasons("the data holds no PEM certificate", openSSL))
        case .damagedPEMCertificate(let index, let openSSL):
            self.init(.invalidCertificate, Self.withReasons("PEM certificate \(index) of the data is damaged", openSSL))
        case .certificateDoesNotReadBack(let subject):
            self.init(.invalidCertificate, "the certificate \"\(subject)\" is encoded in a form OpenSSL reads but cannot write back: its re-encoding does not read back to itself")

        case .identityCertificateUnreadable(let source, let cause):
            self.init(.invalidClientIdentity, "the certificate of \(source) cannot be read: \(NetworkingError(cause).detail)")
        case .privateKeyUnreadable(let source, let problem, let openSSL):
            let reason: String
            switch problem {
            case .encryptedWithoutPassword: reason = "it is encrypted and no password was given"
            case .wrongPasswordOrDamaged: reason = "the password is wrong or the key is damaged"
            case .noPEMKey: reason = "the data holds no PEM private key"
            }
            self.init(.invalidClientIdentity, Self.withReasons("the private key of \(source) cannot be read: \(reason)", openSSL))
        case .identityFileUnreadable(let role, let path, let cause):
            self.init(.invalidClientIdentity, "the \(role) file \(path) cannot be read: \(cause.localizedDescription)",
                      underlyingError: cause)
        case .keyDoesNotMatchCertificate(let source, let subject, let openSSL):
            self.init(.invalidClientIdentity, Self.withReasons(
                "the private key of \(source) does not belong to its certificate \"\(subject)\"", openSSL))
        case .notPKCS12(let source, let openSSL):
            self.init(.invalidClientIdentity, Self.withReasons("\(source) is not a PKCS#12 archive", openSSL))
        case .pkcs12Unopenable(let source, let openSSL):
            self.init(.invalidClientIdentity, Self.withReasons(
                "\(source) cannot be opened: wrong password or unsupported encryption", openSSL))
        case .pkcs12Incomplete(let source):
            self.init(.invalidClientIdentity, "\(source) holds no certificate with its private key")
        case .certificateRefused(let subject, let openSSL):
            self.init(.invalidClientIdentity, Self.withReasons("the client certificate \"\(subject)\" was refused", openSSL))
        case .chainCertificateRefused(let subject, let openSSL):
            self.init(.invalidClientIdentity, Self.withReasons("the chain certificate \"\(subject)\" was refused", openSSL))
        case .privateKeyRefused(let subject, let openSSL):
            self.init(.invalidClientIdentity, Self.withReasons("the private key of \"\(subject)\" was refused", openSSL))

        case .systemCAsUnloadable(let openSSL):
            self.init(.invalidCertificate, Self.withReasons("the system's CA certificates could not be loaded", openSSL))
        case .caFileUnreadable(let path):
            self.init(.invalidCertificate, "the CA file \(path) does not exist or cannot be read")
        case .caFileHoldsNoCertificate(let path, let openSSL):
            self.init(.invalidCertificate, Self.withReasons("the CA file \(path) holds no PEM certificate", openSSL))
        case .caDirectoryMissing(let path):
            self.init(.invalidCertificate, "the CA directory \(path) does not exist")
        case .caDirectoryUnloadable(let path, let openSSL):
            self.init(.invalidCertificate, Self.withReasons("the CA directory \(path) could not be added", openSSL))

        case .untrusted(let trust, let port, let reason, let cause):
            // AFNetworking's -1202, with the chain the server sent.
            let authority = trust.host.contains(":") ? "[\(trust.host)]" : trust.host
            self.init(.serverCertificateUntrusted,
                      "The certificate for this server is invalid; connecting to \(authority) could put confidential information at risk: \(reason)",
                      failingURL: URL(string: "https://\(authority):\(port)/"), underlyingError: cause)
            serverTrust = trust
        case .challengeCancelled(let host):
            self.init(.cancelled, "the authentication challenge handler cancelled the connection to \(host)")
        }
    }

    /// Runs a security-layer operation for a public function documented to throw
    /// `NetworkingError`, mapping its failure at that boundary.
    static func mapping<T>(_ body: () throws(SecurityError) -> T) throws(NetworkingError) -> T {
        do {
            return try body()
        } catch {
            throw NetworkingError(error)
        }
    }

    /// `text`, followed by OpenSSL's reasons in parentheses when there are any.
    static func withReasons(_ text: String, _ openSSL: String) -> String {
        OpenSSLErrorQueue.annotate(text, reasons: openSSL)
    }
}
