/// Why a transport could not be established: what `TransportConnector` reports, in the
/// transport's own terms. The layer above turns it into its exchange error.
enum ConnectFailure: Error {
    /// Connecting (and, with `tls`, the handshake) took longer than `milliseconds`.
    case timedOut(host: String, port: Int, milliseconds: UInt64, tls: Bool)
    /// The last address's TCP connect failed with this libuv status.
    case refused(host: String, port: Int, status: Int32)
    /// A read or write failed with this libuv status while a layer above TCP was being set up.
    case socketFailed(status: Int32)
    /// The server closed the connection while a layer above TCP was being set up.
    case closed
    /// DNS, the proxy tunnel or TLS failed.
    case transport(TransportError)
}
