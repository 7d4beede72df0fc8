/// A connection as its pool and the session's observation see it, whatever its protocol.
/// Loop thread only.
protocol PooledConnection: AnyObject {
    /// The pool's number for this connection.
    var id: Int { get }
    /// ALPN's name for the protocol: "http/1.1" or "h2".
    var protocolName: String { get }
    var timings: ConnectTimings { get }
    /// The TLS layer, for https.
    var tlsTransport: TLSTransport? { get }
    /// For a session that logs or measures: its state as counted and why it closes.
    var observation: (any ConnectionObserver)? { get set }
    var isClosed: Bool { get }
    /// No exchange runs: start the idle timer (`timeout` seconds), after which it closes.
    func parkIdle(timeout: Double)
    /// Closes now. Exchanges still running fail (HTTP/1.1 closes only idle connections this way).
    func close()
}
