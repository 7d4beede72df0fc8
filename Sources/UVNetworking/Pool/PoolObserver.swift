/// Whoever watches one pool for the session's logs and metrics (`PoolObservation`, in
/// Observability/): the pool reports what happens to its connections, by number. Loop-confined;
/// a pool nobody watches holds nil and pays one check per event.
protocol PoolObserver: AnyObject {
    /// Connection `id` is being opened while `waiting` requests wait; what watches it, to keep
    /// on it.
    func opening(connection id: Int, waiting: Int) -> (any ConnectionObserver)?
    /// No unit of the session's connection budget is free: connection `id` waits for one.
    func waitingForBudget(connection id: Int)
    /// The connection is established (connected, through TLS) and takes exchanges.
    func ready(_ connection: PooledConnection)
    /// Resolving, connecting or the handshake failed for connection `id`.
    func failedToConnect(connection id: Int, _ observer: (any ConnectionObserver)?, _ error: ExchangeError)
    /// The connection idles in the pool.
    func parked(_ connection: PooledConnection)
    /// The connection is closed to give its unit of the budget to another origin.
    func evicting(_ connection: PooledConnection)
    /// The connection closed.
    func closed(_ connection: PooledConnection)
}
