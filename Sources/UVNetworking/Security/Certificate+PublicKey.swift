import COpenSSL
import Foundation

extension Certificate {
    /// The DER encoding of the certificate's SubjectPublicKeyInfo: the public key with its
    /// algorithm, the part that stays the same when a certificate is renewed with the same key.
    var subjectPublicKeyInfo: Data {
        // Every parsed certificate has a key; the guards cover memory exhaustion only.
        guard let key = X509_get_X509_PUBKEY(x509) else { return Data() }
        let length = i2d_X509_PUBKEY(key, nil)
        guard length > 0 else { return Data() }
        var data = Data(count: Int(length))
        data.withUnsafeMutableBytes { raw in
            var cursor = raw.baseAddress?.assumingMemoryBound(to: UInt8.self)
            _ = i2d_X509_PUBKEY(key, &cursor)
        }
        return data
    }

    /// The base64 SHA-256 of the DER SubjectPublicKeyInfo: the "pin-sha256" form of HPKP
    /// (RFC 7469) and OWASP's pinning guide, what
    /// `openssl x509 -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64`
    /// prints. Use it in `SecurityPolicy.pinnedPublicKeyHashes`.
    public var publicKeySHA256: String {
        let info = subjectPublicKeyInfo
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var digestLength: UInt32 = 0
        let ok = info.withUnsafeBytes { raw in
            EVP_Digest(raw.baseAddress, raw.count, &digest, &digestLength, EVP_sha256(), nil)
        }
        // SHA-256 of bytes in memory fails only when memory is exhausted.
        precondition(ok == 1, "SHA-256 failed")
        return Data(digest.prefix(Int(digestLength))).base64EncodedString()
    }
}
