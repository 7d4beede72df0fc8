import COpenSSL

/// Owns one reference to an OpenSSL `EVP_PKEY`: the private key of a `ClientIdentity`.
///
/// @unchecked Sendable: the key is not modified after loading; OpenSSL 3 counts references
/// atomically and signs with a key from several connections (threads) at once.
final class PrivateKeyReference: @unchecked Sendable {
    /// The key; borrowed by callers, valid while this object lives.
    let key: OpaquePointer

    /// Takes over one reference the caller holds.
    init(owning key: OpaquePointer) {
        self.key = key
    }

    deinit { EVP_PKEY_free(key) }
}
