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
        try pem(certificate: certificate, privateKey: privateKey, password: password, source: "the PEM identity")
    }

    /// An identity from PEM files; see `pem(certificate:privateKey:password:)`. The two paths
    /// may name the same file when it holds both.
    ///
    /// - Throws: `.invalidClientIdentity` naming the file that cannot be read or parsed.
    public static func pem(certificateFile: String, privateKeyFile: String, password: String? = nil) throws(NetworkingError) -> ClientIdentity {
        let certificate = try readFile(certificateFile, "certificate")
        let key = try readFile(privateKeyFile, "private key")
        return try pem(certificate: certificate, privateKey: key, password: password,
                       source: "\(certificateFile) and \(privateKeyFile)")
    }

    private static func pem(certificate: Data, privateKey: Data, password: String?, source: String) throws(NetworkingError) -> ClientIdentity {
        let certificates: [Certificate]
        do throws(NetworkingError) {
            certificates = try Certificate.certificates(fromPEM: certificate)
        } catch {
            throw NetworkingError(.invalidClientIdentity, "the certificate of \(source) cannot be read: \(error.detail)")
        }
        let key = try readPrivateKey(privateKey, password: password, source: source)
        return try ClientIdentity(certificate: certificates[0], chain: Array(certificates.dropFirst()),
                                  privateKey: key, source: source)
    }

    private static func readPrivateKey(_ pem: Data, password: String?, source: String) throws(NetworkingError) -> PrivateKeyReference {
        let input = MemoryBIO(pem)
        let prompt = PasswordPrompt(password)
        let key = withExtendedLifetime(prompt) {
            PEM_read_bio_PrivateKey(input.bio, nil, answerPasswordPrompt, Unmanaged.passUnretained(prompt).toOpaque())
        }
        guard let key else {
            let reason: String
            switch (prompt.wasAsked, password) {
            case (true, nil): reason = "it is encrypted and no password was given"
            case (true, _): reason = "the password is wrong or the key is damaged"
            case (false, _): reason = "the data holds no PEM private key"
            }
            throw NetworkingError(.invalidClientIdentity, OpenSSLErrorQueue.detail(
                "the private key of \(source) cannot be read: \(reason)"))
        }
        OpenSSLErrorQueue.drain()
        return PrivateKeyReference(owning: key)
    }

    /// The contents of an identity file; `.invalidClientIdentity` naming it when unreadable.
    static func readFile(_ path: String, _ role: String) throws(NetworkingError) -> Data {
        do {
            return try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw NetworkingError(.invalidClientIdentity, "the \(role) file \(path) cannot be read: \(error.localizedDescription)",
                                  underlyingError: error)
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
