import UVHTTP1

/// What went wrong with a connection or an exchange, in the connection's terms: the connect, the
/// socket (libuv statuses), the response's framing, the request body, or a failure below
/// (`transport`). The pool forwards these too (its only error of its own, `noConnection`, is
/// about connecting, so it is a case here rather than a pool error type). The session maps it
/// (`NetworkingError+Exchange.swift`).
enum ExchangeError: Error {
    /// Connecting (and, with `tls`, the handshake) took longer than `milliseconds`.
    case connectTimeout(host: String, port: Int, milliseconds: UInt64, tls: Bool)
    /// The last address's TCP connect failed with this libuv status.
    case connectFailed(host: String, port: Int, status: Int32)
    /// DNS, the proxy tunnel or TLS failed.
    case transport(TransportError)
    /// No socket could be made for want of a file descriptor (EMFILE, ENFILE: this libuv
    /// status), and no connection of the session was open to give way.
    case descriptorsExhausted(host: String, port: Int, status: Int32)
    /// The pool gave up on a waiting request without a connection's error to pass on.
    case noConnection(host: String, port: Int)
    /// Writing the request (head, or head and body) failed with this libuv status.
    case writeFailed(status: Int32)
    /// A read or write on the open connection failed with this libuv status.
    case socketFailed(status: Int32)
    /// Bytes arrived while no response was expected.
    case bytesOutsideResponse(count: Int)
    /// The response could not be decoded.
    case decoding(HTTP1ParseError)
    /// TLS ended without close_notify inside a body that only the end of the connection frames.
    case uncleanTLSEnd
    /// The server closed the connection while no response was in progress.
    case closedWithoutResponse
    /// The server closed the connection inside the response.
    case closedInsideResponse
    /// The HTTP/2 connection or stream failed (a protocol violation, a reset, a GOAWAY).
    case http2(HTTP2Error)
    /// The streamed request body failed.
    case requestBody(RequestBodyError)
}

extension ExchangeError {
    /// The error for a transport that could not be established.
    init(_ failure: ConnectFailure) {
        switch failure {
        case .timedOut(let host, let port, let milliseconds, let tls): self = .connectTimeout(host: host, port: port, milliseconds: milliseconds, tls: tls)
        case .refused(let host, let port, let status): self = .connectFailed(host: host, port: port, status: status)
        case .transport(let error): self = .transport(error)
        case .socketFailed(let status): self = .socketFailed(status: status)
        case .closed: self = .closedWithoutResponse
        }
    }
}
