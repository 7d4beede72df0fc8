/// What an HTTP/1.1 connection reports to the pool that owns it. Loop thread only.
protocol HTTP1ConnectionOwner: AnyObject {
    /// The exchange ended and the connection is idle and reusable.
    func connectionReleased(_ connection: HTTP1Connection)
    /// The connection is closed (by the server, a failure, or the pool).
    func connectionClosed(_ connection: HTTP1Connection)
}
