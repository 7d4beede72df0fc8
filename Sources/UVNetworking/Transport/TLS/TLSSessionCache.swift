import COpenSSL

/// The TLS sessions a pool's next connections resume. Loop-confined (OpenSSL's new-session
/// callback runs inside SSL_read or SSL_do_handshake, on the loop thread).
///
/// A TLS 1.3 ticket is meant for one resumption (RFC 8446 §C.4), and OpenSSL stops offering one
/// it has used; a server sends one or two with every handshake. So TLS 1.3 sessions are kept a
/// few at a time and each is handed out once: a burst of new connections resumes instead of the
/// ones after the first waiting for a fresh ticket. A TLS 1.2 session may serve many.
final class TLSSessionCache {
    /// Newest last.
    private var sessions: [OpaquePointer] = []
    private let capacity: Int

    /// - Parameter connectionLimit: how many connections the pool may open at once. Each
    ///   connection in the middle of its handshake holds the ticket it took, and a full
    ///   handshake brings two; a cache smaller than the pool's burst drops the surplus at one
    ///   moment and is empty at the next, so the following connections do full handshakes. The
    ///   cache holds only what handshakes brought, so room costs nothing until it is used.
    init(connectionLimit: Int = 4) {
        capacity = max(8, 2 * min(connectionLimit, 1_024))
    }

    /// A session to offer, if one is still resumable: removed from the cache if it is a single-use
    /// TLS 1.3 ticket. The caller owns the returned reference.
    func take() -> OpaquePointer? {
        while let session = sessions.last {
            // A session whose connection ended without close_notify was marked not resumable by
            // OpenSSL; offering it would only waste the ticket extension.
            guard SSL_SESSION_is_resumable(session) == 1 else {
                sessions.removeLast()
                SSL_SESSION_free(session)
                continue
            }
            if SSL_SESSION_get_protocol_version(session) == TLS1_3_VERSION {
                return sessions.removeLast()
            }
            _ = SSL_SESSION_up_ref(session)
            return session
        }
        return nil
    }

    /// Whether a session is waiting to be offered.
    var isEmpty: Bool { sessions.isEmpty }

    /// Keeps `newSession`, taking over the caller's reference; the oldest goes past capacity.
    func store(_ newSession: OpaquePointer) {
        sessions.append(newSession)
        if sessions.count > capacity { SSL_SESSION_free(sessions.removeFirst()) }
    }

    /// Forgets every session (the server refused one, or a connection failed).
    func clear() {
        for session in sessions { SSL_SESSION_free(session) }
        sessions.removeAll()
    }

    deinit { clear() }
}
