import COpenSSL

/// OpenSSL's error queue, read into the errors TLS connections fail with.
enum TLSError {
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
    static func failure(during phase: String, host: String, sentClientCertificate: Bool) -> NetworkingError {
        let reason = lastReason()
        let text = OpenSSLErrorQueue.drain()
        if reason == certificateRequiredAlert {
            return NetworkingError(.clientCertificateRequired, "\(host) requires a client certificate (\(text))")
        }
        if badCertificateAlerts.contains(reason) && sentClientCertificate {
            return NetworkingError(.clientCertificateRejected, "\(host) rejected the client certificate (\(text))")
        }
        return NetworkingError(.secureConnectionFailed, "TLS \(phase) with \(host) failed: \(text)")
    }
}
