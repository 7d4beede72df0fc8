/// Whoever watches one connection for the session's logs and metrics. The protocol drivers say
/// why they close; the pool's observer says when the connection opens, works, idles and
/// closes. The watcher (`ConnectionObservation`, in Observability/) decides what that counts
/// as and how a failure reads: this layer hands on its own errors and knows nothing of the
/// session's. Loop-confined; a connection nobody watches holds nil and pays one check per event.
protocol ConnectionObserver: AnyObject {
    /// Why the connection closes, in words. The first reason given wins, so the closer that
    /// knows most says it first; the text is built only if it is kept.
    func noteCloseReason(_ reason: @autoclosure () -> String)
    /// Why the connection closes: an exchange's failure.
    func noteCloseReason(_ error: ExchangeError)
    /// The reason noted, if any.
    var closeReason: String? { get }
    /// Connected (and through TLS): from now on its lifetime is measured.
    func established()
    /// No exchange runs on it.
    func becameIdle()
    /// An exchange was assigned to it.
    func becameActive()
    /// Closed, or failed before it was established.
    func closed()
}
