import COpenSSL
import Foundation

extension ClientIdentity {
    /// An identity from a PKCS#12 (.p12, .pfx) archive holding the certificate, its key and
    /// optionally its intermediates.
    ///
    /// Archives made with OpenSSL 3's defaults (AES-256, PBKDF2) load; ones made with the
    /// legacy RC2-40 and 3DES encryption of older tools need OpenSSL's legacy provider, which
    /// is not loaded, and fail with OpenSSL's "unsupported" reason in the detail: re-export
    /// them (`openssl pkcs12 -legacy` to read, then again without).
    ///
    /// - Throws: `.invalidClientIdentity` when the data is not PKCS#12, the password is wrong,
    ///   it holds no certificate or key, or the key does not belong to the certificate.
    public static func pkcs12(_ data: Data, password: String) throws(NetworkingError) -> ClientIdentity {
        try NetworkingError.mapping { () throws(SecurityError) in
            try pkcs12(data, password: password, source: "the PKCS#12 identity")
        }
    }

    /// An identity from a PKCS#12 file; see `pkcs12(_:password:)`.
    ///
    /// - Throws: `.invalidClientIdentity` naming the file.
    public static func pkcs12(file: String, password: String) throws(NetworkingError) -> ClientIdentity {
        try NetworkingError.mapping { () throws(SecurityError) in
            try pkcs12(readFile(file, "PKCS#12"), password: password, source: file)
        }
    }

    private static func pkcs12(_ data: Data, password: String, source: String) throws(SecurityError) -> ClientIdentity {
        let archive: OpaquePointer? = data.withUnsafeBytes { raw in
            guard let start = raw.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
            var cursor: UnsafePointer<UInt8>? = UnsafePointer(start)
            return d2i_PKCS12(nil, &cursor, raw.count)
        }
        guard let archive else {
            throw .notPKCS12(source: source, openSSL: OpenSSLErrorQueue.drain())
        }
        defer { PKCS12_free(archive) }

        var key: OpaquePointer?
        var leaf: OpaquePointer?
        var extra: OpaquePointer?
        guard PKCS12_parse(archive, password, &key, &leaf, &extra) == 1 else {
            throw .pkcs12Unopenable(source: source, openSSL: OpenSSLErrorQueue.drain())
        }
        // Take ownership of everything PKCS12_parse returned before any early exit.
        let privateKey = key.map { PrivateKeyReference(owning: $0) }
        let certificate = leaf.map { Certificate(owning: $0) }
        var chain: [Certificate] = []
        if let extra {
            for index in 0..<uvn_sk_X509_num(extra) {
                if let x509 = uvn_sk_X509_value(extra, index) { chain.append(Certificate(x509: x509)) }
            }
            uvn_sk_X509_pop_free(extra)
        }
        OpenSSLErrorQueue.drain()
        guard let privateKey, let certificate else {
            throw .pkcs12Incomplete(source: source)
        }
        do {
            for member in [certificate] + chain { try member.checkReadsBack() }
        } catch {
            throw .identityCertificateUnreadable(source: source, cause: error)
        }
        return try ClientIdentity(certificate: certificate, chain: chain, privateKey: privateKey, source: source)
    }
}
