/// What an HTTP/1.1 connection reports to the pool that owns it. Loop thread only.
protocol HTTP1ConnectionOwner: AnyObject {
    /// An exchange ended and the connection is reusable: idle, or answering the next pipelined
    /// request.
    func connectionReleased(_ connection: HTTP1Connection)
    /// The connection is closed (by the server, a failure, or the pool).
    func connectionClosed(_ connection: HTTP1Connection)
    /// The server answered with HTTP/1.1 and kept the connection: requests that allow it may be
    /// pipelined onto it.
    func connectionMayPipeline(_ connection: HTTP1Connection)
    /// No more requests may be pipelined onto the connection (it closes, or must close soon).
    func connectionStopsPipelining(_ connection: HTTP1Connection)
    /// The server broke off or sent what could not be decoded while pipelined requests were
    /// outstanding: its origin should not be sent pipelined requests again.
    func connectionMisbehavedWhilePipelining(_ connection: HTTP1Connection)
}
