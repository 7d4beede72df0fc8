import COpenSSL

/// Owns one reference to an OpenSSL `X509` and drops it when the last `Certificate` sharing it
/// goes away.
///
/// @unchecked Sendable: nothing mutates the X509 after it is parsed. OpenSSL 3 fills the
/// certificate's lazy caches (decoded extensions, hashes) under the object's own lock and counts
/// references atomically, so one X509 may be read, verified and up-referenced from several
/// threads at once.
final class X509Reference: @unchecked Sendable {
    /// The certificate; borrowed by callers, valid while this object lives.
    let x509: OpaquePointer

    /// Takes over one reference the caller holds (from d2i_X509, PEM_read_bio_X509 or
    /// X509_up_ref).
    init(owning x509: OpaquePointer) {
        self.x509 = x509
    }

    deinit { X509_free(x509) }
}
