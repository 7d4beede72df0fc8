import COpenSSL
import Foundation

/// The trust anchors a server's chain is verified against: an OpenSSL `X509_STORE` holding the
/// system's CAs, the caller's CA files and directories, or (for certificate pinning) only the
/// pinned certificates.
///
/// @unchecked Sendable: the store is filled in `init` and only read afterwards. OpenSSL 3 locks
/// an X509_STORE internally for lookups (including the lazy reads of hashed CA directories), so
/// one store serves verifications on many threads at once, the way one SSL_CTX's store serves
/// every connection made from it.
final class TrustStore: @unchecked Sendable {
    /// The X509_STORE, borrowed: valid while this object lives. The transport shares it with
    /// its SSL_CTX through SSL_CTX_set1_cert_store, which takes a reference of its own.
    let store: OpaquePointer

    /// The system's CAs only, loaded once per process (parsing them all takes milliseconds) and
    /// shared by every session that does not configure its own anchors. Empty when they cannot
    /// be loaded, so that every chain is then untrusted rather than the process failing.
    static let system: TrustStore = (try? TrustStore(trustsSystemCAs: true)) ?? TrustStore(anchors: [])

    /// A store with the system's CAs and/or the given ones.
    ///
    /// - Parameters:
    ///   - trustsSystemCAs: Load OpenSSL's default locations (on Debian the ca-certificates
    ///     bundle /etc/ssl/certs/ca-certificates.crt and the hashed /etc/ssl/certs, through
    ///     /usr/lib/ssl; the SSL_CERT_FILE and SSL_CERT_DIR environment variables override them).
    ///   - caFiles: PEM files of one or more CA certificates (CRLs in them are loaded too).
    ///   - caDirectories: directories in OpenSSL's hashed layout (`openssl rehash`), read lazily
    ///     during verification.
    /// - Throws: the `SecurityError` naming the file or directory that could not be loaded.
    init(trustsSystemCAs: Bool = true, caFiles: [String] = [], caDirectories: [String] = []) throws(SecurityError) {
        let store = Self.makeStore()
        do throws(SecurityError) {
            if trustsSystemCAs && X509_STORE_set_default_paths(store) != 1 {
                throw .systemCAsUnloadable(openSSL: OpenSSLErrorQueue.drain())
            }
            for path in caFiles { try Self.loadFile(path, into: store) }
            for path in caDirectories { try Self.loadDirectory(path, into: store) }
        } catch {
            X509_STORE_free(store)
            throw error
        }
        self.store = store
    }

    /// A store whose only anchors are `anchors`: the pinned certificates of certificate
    /// pinning. Verifications against it pass `X509_V_FLAG_PARTIAL_CHAIN`, so a pinned
    /// intermediate or leaf is an anchor too.
    init(anchors: some Sequence<Certificate>) {
        let store = Self.makeStore()
        for certificate in anchors {
            // The store takes its own reference. Adding a certificate twice is not an error in
            // OpenSSL 3; nothing else can fail short of memory exhaustion.
            _ = X509_STORE_add_cert(store, certificate.x509)
        }
        OpenSSLErrorQueue.drain()
        self.store = store
    }

    deinit { X509_STORE_free(store) }

    private static func makeStore() -> OpaquePointer {
        // Fails only when memory is exhausted.
        guard let store = X509_STORE_new() else { fatalError("X509_STORE_new failed: out of memory") }
        return store
    }

    private static func loadFile(_ path: String, into store: OpaquePointer) throws(SecurityError) {
        // Checked first so that a typo reads as "cannot read", not as an OpenSSL parse error.
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw .caFileUnreadable(path: path)
        }
        guard X509_STORE_load_file(store, path) == 1 else {
            throw .caFileHoldsNoCertificate(path: path, openSSL: OpenSSLErrorQueue.drain())
        }
    }

    private static func loadDirectory(_ path: String, into store: OpaquePointer) throws(SecurityError) {
        // OpenSSL only records the path and reads it during verification, where a missing
        // directory would silently trust nothing; check it now.
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw .caDirectoryMissing(path: path)
        }
        guard X509_STORE_load_path(store, path) == 1 else {
            throw .caDirectoryUnloadable(path: path, openSSL: OpenSSLErrorQueue.drain())
        }
    }
}
