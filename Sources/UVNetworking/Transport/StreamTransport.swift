/// A byte stream to one server, as an HTTP/1.1 connection sees it: plain TCP, or TLS over TCP.
/// Loop-confined; no delegate callback runs after `close`.
///
/// Only TCP connects (`TCPTransport.connect`, raced over the host's addresses by
/// `ConnectionRace`). A layer above (a proxy's tunnel, TLS) is made over a TCP transport and
/// starts its own work (the CONNECT, the handshake and the trust evaluation) when that reports
/// `transportDidConnect`; it reports `transportDidConnect` or `didFail` in turn.
protocol StreamTransport: AnyObject {
    /// Who gets the callbacks. Held strongly until the transport closes (by `close` or by a
    /// failure it reports), then dropped: a closed transport holds no delegate, so the cycle with
    /// its owner ends there, and a delegate is never gone while the transport can still call it.
    /// Not weak: a weak reference gives its object a side table for life, and then every retain
    /// and release of it (the connection, a dozen times per request) takes the runtime's slow
    /// path.
    var delegate: TransportDelegate? { get set }
    var isClosed: Bool { get }
    /// Starts delivering reads (idempotent).
    func startReading()
    /// Stops delivering reads until `startReading`: the kernel buffers, then TCP flow control
    /// slows the peer.
    func stopReading()
    /// Writes `bytes`: at once, or queued (`.pending`, then `transportDidFinishWriting`).
    /// `bytes` need only live during the call: what cannot be written at once is copied, so a
    /// caller can write from a scratch buffer without allocating.
    func write(_ bytes: UnsafeRawBufferPointer) -> TransportWriteOutcome
    /// Closes. With `reset`, the peer sees RST instead of FIN (a response abandoned mid-body),
    /// and TLS sends no close_notify.
    func close(reset: Bool)
    /// The connection is idle: memory kept only to make the next exchange cheaper can go
    /// (TLS: OpenSSL's record buffers). Nothing changes on the wire.
    func releaseIdleMemory()
}

extension StreamTransport {
    /// Plain TCP keeps nothing worth giving back.
    func releaseIdleMemory() {}

    /// Writes an array's bytes (see `write(_:)` for raw bytes).
    func write(_ bytes: [UInt8]) -> TransportWriteOutcome {
        bytes.withUnsafeBytes { write($0) }
    }
}

/// What a write did.
enum TransportWriteOutcome: Equatable { case written, pending, failed(Int32) }

/// What a transport reports to its owner. Every callback runs on the loop thread.
protocol TransportDelegate: AnyObject {
    /// Connected; for TLS, the handshake finished and the server is trusted.
    func transportDidConnect(_ transport: StreamTransport)
    /// The TCP connect failed (the next address may do better).
    func transport(_ transport: StreamTransport, didFailToConnect code: Int32)
    /// `bytes` is valid only during the call: it is one of the loop's shared buffers.
    func transport(_ transport: StreamTransport, didRead bytes: UnsafeRawBufferPointer)
    /// The server closed its side. `cleanly` is false when TLS ended without close_notify, so
    /// a body framed by the end of the connection may have been cut short by someone else.
    func transportDidReadEOF(_ transport: StreamTransport, cleanly: Bool)
    /// A read or write error from the socket (ECONNRESET, EPIPE, ...).
    func transport(_ transport: StreamTransport, didFailWith code: Int32)
    /// A failure above the socket: the TLS handshake, the server's trust, a TLS alert.
    func transport(_ transport: StreamTransport, didFail error: TransportError)
    /// A write that returned `.pending` has reached the kernel.
    func transportDidFinishWriting(_ transport: StreamTransport)
}
