import UVHTTP1

/// One request and its response on a connection, as the task running it sees it, whatever the
/// protocol: HTTP/1.1 (the connection itself, one exchange at a time) or HTTP/2 (a stream).
/// Redirects, sinks, timeouts, metrics, hooks, cookies and wire capture all work through this
/// and `ExchangeDelegate`, so the task side has no per-protocol branch. Loop thread only.
protocol Exchange: AnyObject {
    /// Runs the request. `request` holds the request in HTTP/1.1 form (what the session
    /// prepared: the head, then the body unless `body` streams it): HTTP/1.1 writes it as it
    /// is, HTTP/2 translates the head into a header block. With `expectsContinue` the body
    /// waits for `100 Continue` (or a second). Reports to `delegate` until it finishes or fails.
    func execute(_ request: [UInt8], isHEAD: Bool, body: RequestBodyReader?, expectsContinue: Bool, for delegate: ExchangeDelegate)
    /// Records the next `execute`'s bytes with `recorder` (requests with a `WireCapture`).
    func record(with recorder: WireExchangeRecorder)
    /// Stops delivering the response (the task was suspended or its consumer is behind). Over
    /// HTTP/1.1 the socket stops; over HTTP/2 only this stream's window stops opening.
    func pauseReading()
    /// Delivers again after `pauseReading`.
    func resumeReading()
    /// Abandons the exchange (cancellation, timeout, a body not worth reading). The delegate is
    /// not told. HTTP/1.1 closes the connection; HTTP/2 resets only the stream.
    func abort()
    /// Calls the delegate's `exchangeTimerFired` at `deadline` (loop milliseconds), unless
    /// re-armed earlier first.
    func armExchangeTimer(at deadline: UInt64)
    /// Whether the response body in flight ends only when the connection does (HTTP/1.1 without
    /// Content-Length or chunked; never over HTTP/2, whose streams end themselves).
    var responseBodyEndsWithConnection: Bool { get }

    // Facts about the connection under the exchange, for metrics, hooks and logs.
    /// The pool's number for the connection.
    var connectionID: Int { get }
    /// ALPN's name for the protocol: "http/1.1" or "h2" (`TransactionMetrics.networkProtocolName`).
    var protocolName: String { get }
    /// Whether the connection carried a request before this one.
    var isReused: Bool { get }
    /// Before `execute`: whether the connection carried a request already.
    var hasServedRequests: Bool { get }
    var timings: ConnectTimings { get }
    /// The remote address as text.
    var remoteAddressText: String? { get }
    /// The TLS layer, for https (session and certificate facts).
    var tlsTransport: TLSTransport? { get }
    /// This exchange's bytes on the wire so far (framing included; over HTTP/2 its frames).
    var exchangeBytesWritten: Int64 { get }
    var exchangeBytesRead: Int64 { get }
    /// What a session that logs or measures keeps on the connection.
    var connectionObservation: (any ConnectionObserver)? { get }
}

/// What an exchange reports to the task running it. Loop thread only; after `exchangeFinished`
/// or `exchangeFailed` nothing more is reported.
protocol ExchangeDelegate: AnyObject {
    /// The whole request reached the kernel.
    func exchangeRequestWritten()
    /// Another chunk of a streamed body reached the kernel: `totalBytes` body bytes so far
    /// (framing not counted). Not called for a body sent with the head.
    func exchangeSentBody(totalBytes: Int64)
    /// The final response head (1xx heads are consumed by the connection), with the body length
    /// it announced (0 for HEAD, 204 and 304; nil when not announced).
    func exchangeReceivedHead(_ head: ResponseHead, bodyLength: Int64?)
    /// Body bytes, in order, never empty: a view of the connection's buffer, valid only during
    /// the call (copy what must outlive it).
    func exchangeReceivedBody(_ bytes: UnsafeRawBufferPointer)
    /// The response ended, and the request was fully written or, for a response that ended
    /// first, given up.
    func exchangeFinished()
    /// The exchange failed. `context` says what the server may have seen, for the retry rule.
    func exchangeFailed(_ error: ExchangeError, context: ExchangeFailureContext)
    /// The deadline set with `Exchange.armExchangeTimer(at:)` passed.
    func exchangeTimerFired()
}

/// What the server may have done with a failed exchange's request: what decides whether the
/// task may send it again.
struct ExchangeFailureContext: Equatable {
    /// The connection had carried a request before (a stale keep-alive connection is the
    /// classic failure a replay cures).
    var onReusedConnection: Bool
    /// Some byte of the response had arrived.
    var responseStarted: Bool
    /// The server said it never processed the request: an HTTP/2 stream above a GOAWAY's last
    /// stream id or refused with REFUSED_STREAM (RFC 9113 §8.7). Such a request is sent again
    /// whatever its method.
    var neverProcessed = false
    /// A pipelined request (RFC 9112 §9.3.2) whose response had not begun when the connection
    /// ended. Only idempotent requests are pipelined, so it is sent again, like `neverProcessed`.
    var unansweredInPipeline = false
    /// The connection had finished other exchanges: a server that refuses some streams while it
    /// serves others is making progress, and replaying onto it is no loop.
    var connectionMadeProgress = false
}
