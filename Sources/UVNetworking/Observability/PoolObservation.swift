import Dispatch
import Logging

/// What one pool reports about its connections: to the session's background logger, and its
/// `http.client.open_connections` and `http.client.connection.duration`. Made with the pool
/// when the session reports (`ConnectionPool.observation`). Loop-confined.
final class PoolObservation {
    /// nil when the background logger takes no debug line.
    let logger: Logger?
    let meters: ConnectionMeters?
    let host: String
    let port: Int

    init?(observer: SessionObserver, host: String, port: Int) {
        let logger = observer.logger
        let meters = observer.metrics?.connections(host: host, port: port)
        guard logger != nil || meters != nil else { return nil }
        self.logger = logger
        self.meters = meters
        self.host = host
        self.port = port
    }

    @inline(__always)
    func log(_ level: Logger.Level, _ message: @autoclosure () -> Logger.Message, connection id: Int,
             _ metadata: @autoclosure () -> Logger.Metadata = [:]) {
        guard let logger, logger.logLevel <= level else { return }
        var all = metadata()
        all[LogKey.connectionID] = "\(id)"
        all[LogKey.serverAddress] = "\(host)"
        all[LogKey.serverPort] = "\(port)"
        logger.log(level: level, message(), metadata: all)
    }
}

/// What a connection's reports need to remember: its state as counted in
/// `http.client.open_connections`, when it opened, and why it closes. Loop-confined.
final class ConnectionObservation: ConnectionObserver {
    enum State { case opening, idle, active, closed }
    private(set) var state = State.opening
    private let meters: ConnectionMeters?
    /// When it was established, uptime nanoseconds.
    private var openedAt: UInt64 = 0
    /// Why it closes, noted by whoever closes it; the first reason given wins.
    private(set) var closeReason: String?

    init(meters: ConnectionMeters?) {
        self.meters = meters
    }

    func noteCloseReason(_ reason: @autoclosure () -> String) {
        if closeReason == nil { closeReason = reason() }
    }

    /// `noteCloseReason` with an exchange's failure, in the library's words: the connection hands
    /// on its own error, the session says how it reads.
    func noteCloseReason(_ error: ExchangeError) {
        if closeReason == nil { closeReason = "\(NetworkingError(error))" }
    }

    func established() {
        openedAt = DispatchTime.now().uptimeNanoseconds
    }

    func becameIdle() {
        switch state {
        case .idle, .closed: return
        case .active: meters?.active.decrement()
        case .opening: break
        }
        meters?.idle.increment()
        state = .idle
    }

    func becameActive() {
        switch state {
        case .active, .closed: return
        case .idle: meters?.idle.decrement()
        case .opening: break
        }
        meters?.active.increment()
        state = .active
    }

    /// The connection closed: it no longer counts, and its duration is recorded if it was
    /// ever established.
    func closed() {
        switch state {
        case .closed: return
        case .idle: meters?.idle.decrement()
        case .active: meters?.active.decrement()
        case .opening: break
        }
        if openedAt != 0 {
            meters?.duration.recordNanoseconds(Int64(clamping: DispatchTime.now().uptimeNanoseconds &- openedAt))
        }
        state = .closed
    }
}
