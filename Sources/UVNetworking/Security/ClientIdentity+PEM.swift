import COpenSSL
import Foundation

extension ClientIdentity {
    /// An identity from PEM text.
    ///
    /// - Parameters:
    ///   - certificate: the client certificate, optionally followed by its intermediates.
    ///   - privateKey: the private key (PKCS#8, traditional RSA or EC), encrypted or not.
    ///   - password: the key's password, when it is encrypted.
    /// - Throws: `.invalidClientIdentity` when there is no certificate, the key cannot be read
    ///   or decrypted (wrong or missing password), or the key does not belong to the certificate.
    public static func pem(certificate: Data, privateKey: Data, password: String? = nil) throws(NetworkingError) -> ClientIdentity {
        try NetworkingError.mapping { () throws(SecurityError) in
            try pem(certificate: certificate, privateKey: privateKey, password: password, source: "the PEM identity")
        }
    }

    /// An identity from PEM files; see `pem(certificate:privateKey:password:)`. The two paths
    /// may name the same file when it holds both.
    ///
    /// - Throws: `.invalidClientIdentity` naming the file that cannot be read or parsed.
    public static func pem(certificateFile: String, privateKeyFile: String, password: String? = nil) throws(NetworkingError) -> ClientIdentity {
        try NetworkingError.mapping { () throws(SecurityError) in
            let certificate = try readFile(certificateFile, "certificate")
            let key = try readFile(privateKeyFile, "private key")
            return try pem(certificate: certificate, privateKey: key, password: password,
                           source: "\(certificateFile) and \(privateKeyFile)")
        }
    }

    private static func pem(certificate: Data, privateKey: Data, password: String?, source: String) throws(SecurityError) -> ClientIdentity {
        let certificates: [Certificate]
        do throws(SecurityError) {
            certificates = try Certificate.parseCertificates(fromPEM: certificate)
        } catch {
            throw .identityCertificateUnreadable(source: source, cause: error)
        }
        let key = try readPrivateKey(privateKey, password: password, source: source)
        return try ClientIdentity(certificate: certificates[0], chain: Array(certificates.dropFirst()),
                                  privateKey: key, source: source)
    }

    private static func readPrivateKey(_ pem: Data, password: String?, source: String) throws(SecurityError) -> PrivateKeyReference {
        let input = MemoryBIO(pem)
        let prompt = PasswordPrompt(password)
        let key = withExtendedLifetime(prompt) {
            PEM_read_bio_PrivateKey(input.bio, nil, answerPasswordPrompt, Unmanaged.passUnretained(prompt).toOpaque())
        }
        guard let key else {
            let problem: SecurityError.KeyProblem
            switch (prompt.wasAsked, password) {
            case (true, nil): problem = .encryptedWithoutPassword
            case (true, _): problem = .wrongPasswordOrDamaged
            case (false, _): problem = .noPEMKey
            }
            throw .privateKeyUnreadable(source: source, problem: problem, openSSL: OpenSSLErrorQueue.drain())
        }
        OpenSSLErrorQueue.drain()
        return PrivateKeyReference(owning: key)
    }

    /// The contents of an identity file; `.identityFileUnreadable` naming it when unreadable.
    static func readFile(_ path: String, _ role: String) throws(SecurityError) -> Data {
        do {
            return try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw .identityFileUnreadable(role: role, path: path, cause: error)
        }
    }
}

/// The password for one key read, and whether OpenSSL asked for it (i.e. the key is
/// encrypted).
private final class PasswordPrompt {
    let password: [CChar]?
    var wasAsked = false

    init(_ password: String?) {
        self.password = password.map { Array($0.utf8CString.dropLast()) }
    }
}

/// OpenSSL's pem_password_cb: copies the password into `buffer` and returns its length, or
/// -1 to refuse. Passing our own callback also keeps OpenSSL's default from prompting on the
/// terminal when an encrypted key comes without a password.
private func answerPasswordPrompt(_ buffer: UnsafeMutablePointer<CChar>?, _ size: Int32, _ writing: Int32,
                                  _ context: UnsafeMutableRawPointer?) -> Int32 {
    guard let buffer, let context else { return -1 }
    let prompt = Unmanaged<PasswordPrompt>.fromOpaque(context).takeUnretainedValue()
    prompt.wasAsked = true
    guard let password = prompt.password, password.count <= Int(size) else { return -1 }
    password.withUnsafeBufferPointer { bytes in
        if let base = bytes.baseAddress { buffer.update(from: base, count: bytes.count) }
    }
    return Int32(password.count)
}
