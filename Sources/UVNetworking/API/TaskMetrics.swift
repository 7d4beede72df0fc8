import Foundation

/// What a session measured about one task, like URLSessionTaskMetrics; handed to
/// `SessionManager.taskDidFinishCollectingMetrics` and put in the did-complete notification.
///
/// Collected for tasks that run while the manager has a hook set, and for every async request:
/// when the task ran, its redirects, its TLS session, and for each exchange (`transactions`) the
/// timings, bytes and connection it used. Tasks of a manager without hooks cost nothing to measure.
public struct TaskMetrics: Sendable, Hashable, CustomStringConvertible {
    /// From the moment the task started on the session's loop (its first `resume()` reached the
    /// loop, or its cancellation if it never started) to the moment it ended there, before
    /// serialization. Wall-clock dates, so only meaningful within one process run.
    public var taskInterval: DateInterval
    /// Redirects followed.
    public var redirectCount: Int
    /// Whether the request went out on a connection that had served an earlier request; nil
    /// when no response head arrived (the task failed or was cancelled before one).
    public var isReusedConnection: Bool?
    /// The TLS facts of the connection the response came on (https only; nil when no response
    /// head arrived).
    public var tls: TLSMetrics?
    /// Every exchange, in order: one per redirect followed, one per request replayed on a fresh
    /// connection (a reused connection the server closed as the request arrived, retried once
    /// without telling the caller), then the final one. Those with a `requestStartDate` got a
    /// connection and are the requests the task sent, as URLSession lists every transaction.
    public var transactions: [TransactionMetrics]

    public init(taskInterval: DateInterval, redirectCount: Int = 0, isReusedConnection: Bool? = nil, tls: TLSMetrics? = nil,
                transactions: [TransactionMetrics] = []) {
        self.taskInterval = taskInterval
        self.redirectCount = redirectCount
        self.isReusedConnection = isReusedConnection
        self.tls = tls
        self.transactions = transactions
    }

    public var description: String {
        let reused = isReusedConnection.map { $0 ? "reused" : "new" } ?? "none"
        return "TaskMetrics(duration: \(taskInterval.duration) s, redirects: \(redirectCount), connection: \(reused))"
    }
}

/// The TLS side of a connection, like URLSessionTaskTransactionMetrics' TLS fields.
public struct TLSMetrics: Sendable, Hashable {
    /// "TLSv1.3" or "TLSv1.2".
    public var protocolVersion: String
    /// The negotiated cipher suite, e.g. "TLS_AES_256_GCM_SHA384".
    public var cipherSuite: String?
    /// Whether the handshake resumed an earlier session of the same pool (no certificate
    /// exchange, no chain evaluation).
    public var isSessionResumed: Bool
    /// The chain the security policy verified, leaf first; empty on a resumed session, whose
    /// chain was verified by the handshake that made it.
    public var verifiedChain: [Certificate]

    public init(protocolVersion: String, cipherSuite: String?, isSessionResumed: Bool, verifiedChain: [Certificate]) {
        self.protocolVersion = protocolVersion
        self.cipherSuite = cipherSuite
        self.isSessionResumed = isSessionResumed
        self.verifiedChain = verifiedChain
    }
}
