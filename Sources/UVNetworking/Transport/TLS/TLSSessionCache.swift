import COpenSSL

/// The TLS session a pool's next connection resumes: the latest one its connections received.
/// Loop-confined (OpenSSL's new-session callback runs inside SSL_read or SSL_do_handshake, on the
/// loop thread).
final class TLSSessionCache {
    private var session: OpaquePointer?

    /// The session to offer, if one is still resumable.
    var resumable: OpaquePointer? {
        guard let session else { return nil }
        // A session whose connection ended without close_notify was marked not resumable by
        // OpenSSL; offering it would only waste the ticket extension.
        if SSL_SESSION_is_resumable(session) == 1 { return session }
        SSL_SESSION_free(session)
        self.session = nil
        return nil
    }

    /// Keeps `session` (taking over the caller's reference) instead of the one held.
    func store(_ newSession: OpaquePointer) {
        if let session { SSL_SESSION_free(session) }
        session = newSession
    }

    /// Forgets the session (its server refused it, or the connection failed).
    func clear() {
        if let session { SSL_SESSION_free(session) }
        session = nil
    }

    deinit { clear() }
}
