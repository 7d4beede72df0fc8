import UVHTTP1

/// What an HTTP/1.1 connection reports to the task running an exchange on it. Loop thread only;
/// after `exchangeFinished` or `exchangeFailed` nothing more is reported.
protocol HTTP1ExchangeDelegate: AnyObject {
    /// The whole request reached the kernel.
    func exchangeRequestWritten()
    /// Another chunk of a streamed body reached the kernel: `totalBytes` body bytes so far
    /// (framing not counted). Not called for a body sent with the head.
    func exchangeSentBody(totalBytes: Int64)
    /// The final response head (1xx heads are consumed by the connection), with the body length
    /// it announced (0 for HEAD, 204 and 304; nil when chunked or EOF-framed).
    func exchangeReceivedHead(_ head: ResponseHead, bodyLength: Int64?)
    /// Body bytes, in order, never empty: a view of the connection's read buffer, valid only
    /// during the call (copy what must outlive it).
    func exchangeReceivedBody(_ bytes: UnsafeRawBufferPointer)
    /// The response ended, and the request was fully written or, for a response that ended
    /// first, given up (the connection then closes).
    func exchangeFinished()
    /// The exchange failed. `onReusedConnection` and `responseStarted` feed the retry rule.
    func exchangeFailed(_ error: HTTP1Error, onReusedConnection: Bool, responseStarted: Bool)
    /// The deadline set with `HTTP1Connection.armExchangeTimer(at:)` passed.
    func exchangeTimerFired()
}

/// What an HTTP/1.1 connection reports to the pool that owns it. Loop thread only.
protocol HTTP1ConnectionOwner: AnyObject {
    func connectionReady(_ connection: HTTP1Connection)
    func connection(_ connection: HTTP1Connection, failedToConnect error: HTTP1Error)
    /// The exchange ended and the connection is idle and reusable.
    func connectionReleased(_ connection: HTTP1Connection)
    /// The connection is closed (it reported `connectionReady` before, or the pool closed it).
    func connectionClosed(_ connection: HTTP1Connection)
}
