import COpenSSL

/// What went wrong in TLS: making the context or connection, the handshake, a record, or the
/// trust decision. Carries the host and OpenSSL's reasons (read from its error queue when the
/// error is made); the session maps it (`NetworkingError+Transport.swift`).
enum TLSError: Error {
    /// Which step of the connection OpenSSL failed in.
    enum Phase: String, Sendable { case handshake, write, read }

    /// SSL_CTX_new failed.
    case contextUnavailable(openSSL: String)
    /// The trust store or the client identity of the configuration could not be loaded.
    case configuration(SecurityError)
    /// SSL_new or a memory BIO could not be made.
    case connectionUnavailable(openSSL: String)
    case closedDuringHandshake(host: String)
    /// OpenSSL asked for a trust decision before the server sent a certificate.
    case pausedWithoutCertificate(host: String)
    /// The server sent certificate_required: it wants a client certificate.
    case clientCertificateRequired(host: String, openSSL: String)
    /// The server sent a bad-certificate alert after we presented our certificate.
    case clientCertificateRejected(host: String, openSSL: String)
    /// Any other failure OpenSSL reported.
    case failed(Phase, host: String, openSSL: String)
    /// The socket failed before the handshake finished (a libuv status).
    case socketFailedDuringHandshake(host: String, status: Int32)
    /// The evaluation of the server's chain refused it.
    case untrusted(SecurityError)

    /// OpenSSL's reason codes for the alerts a server sends when it wanted a client certificate
    /// (SSL_AD_REASON_OFFSET + the alert number).
    private static let certificateRequiredAlert: Int32 = 1116  // TLS 1.3 certificate_required
    private static let badCertificateAlerts: Set<Int32> = [1042, 1043, 1044, 1045, 1046, 1048, 1049]
    /// SSL_R_UNEXPECTED_EOF_WHILE_READING: the peer closed without close_notify.
    static let unexpectedEOFReason: Int32 = 294

    /// The reason of the most recent error in the queue, without removing it.
    static func lastReason() -> Int32 {
        Int32(truncatingIfNeeded: ERR_peek_last_error() & 0x7FFFFF)
    }

    /// The error for a TLS failure whose cause is in OpenSSL's queue (emptied here).
    static func failure(during phase: Phase, host: String, sentClientCertificate: Bool) -> TLSError {
        let reason = lastReason()
        let text = OpenSSLErrorQueue.drain()
        if reason == certificateRequiredAlert {
            return .clientCertificateRequired(host: host, openSSL: text)
        }
        if badCertificateAlerts.contains(reason) && sentClientCertificate {
            return .clientCertificateRejected(host: host, openSSL: text)
        }
        return .failed(phase, host: host, openSSL: text)
    }
}
