/// What an HTTP/2 connection reports to the pool that owns it. Loop thread only.
protocol HTTP2ConnectionOwner: AnyObject {
    /// The server changed how many streams the connection may carry at once.
    func connection(_ connection: HTTP2Connection, changedStreamLimit limit: Int)
    /// A stream ended (finished, failed or reset): the connection has room for another.
    func connectionReleasedStream(_ connection: HTTP2Connection)
    /// The server said GOAWAY (or the connection failed): no new stream goes to it.
    func connectionDraining(_ connection: HTTP2Connection)
    /// The connection is closed.
    func connectionClosed(_ connection: HTTP2Connection)
}
