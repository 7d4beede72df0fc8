import Logging

/// What a pool's events become in the session's logs and metrics: called only where the pool
/// holds an observer, so a session that reports nothing pays one nil check per event.
extension PoolObservation: PoolObserver {
    /// A connection is being opened; its observation, to keep on it.
    func opening(connection id: Int, waiting: Int) -> (any ConnectionObserver)? {
        log(.debug, "opening connection", connection: id, ["waiting": "\(waiting)"])
        return ConnectionObservation(meters: meters)
    }

    /// No unit of the session's connection budget is free: the connection waits for one.
    func waitingForBudget(connection id: Int) {
        log(.debug, "waiting for the connection budget (maximumConnections reached)", connection: id)
    }

    func ready(_ connection: PooledConnection) {
        connection.observation?.established()
        guard let logger, logger.logLevel <= .debug else { return }
        var metadata: Logger.Metadata = [:]
        if let remote = connection.timings.remote { metadata["network.peer.address"] = "\(remote.ipAddress)" }
        if let tls = connection.tlsTransport {
            metadata["tls.protocol.version"] = "\(tls.protocolVersion)"
            metadata["tls.cipher"] = "\(tls.cipherSuite ?? "none")"
            metadata["tls.resumed"] = "\(tls.isSessionReused)"
        }
        metadata["network.protocol.name"] = "\(connection.protocolName)"
        log(.debug, connection.tlsTransport == nil ? "connection opened" : "connection opened, TLS handshake done",
            connection: connection.id, metadata)
    }

    /// Resolving, connecting or the handshake failed (DNS failures and timeouts, refused
    /// connects, TLS and pinning refusals). The reason is the library's error text, which
    /// carries no credential or key.
    func failedToConnect(connection id: Int, _ observation: (any ConnectionObserver)?, _ error: ExchangeError) {
        observation?.closed()
        log(.debug, "connection failed to open", connection: id, [LogKey.error: "\(NetworkingError(error))"])
    }

    func parked(_ connection: PooledConnection) {
        connection.observation?.becameIdle()
        // Once per request: no line built (nor its closures made) when no logger takes it.
        if logger != nil { log(.trace, "connection idle", connection: connection.id) }
    }

    func evicting(_ connection: PooledConnection) {
        connection.observation?.noteCloseReason("evicted: the least recently used idle connection, for the connection budget")
    }

    func closed(_ connection: PooledConnection) {
        let observation = connection.observation
        observation?.closed()
        log(.debug, "connection closed", connection: connection.id,
            [LogKey.reason: "\(observation?.closeReason ?? "closed")"])
    }
}
