import Foundation
import Logging

/// The runner's side of logging and metrics (TaskObservation). Each event costs a runner
/// without an observation one nil check, inlined where it happens.
extension TaskRunner {
    /// The task starts (its first enqueue): it gets an observation when its session reports or
    /// its request has a logger that takes debug lines.
    @inline(__always)
    func observeStart(_ prepared: PreparedRequest) {
        if engine.observer != nil || task.originalRequest.logger != nil { startObservation(prepared) }
    }

    private func startObservation(_ prepared: PreparedRequest) {
        let observer = engine.observer
        // A request's own logger's level is read once, here: one that takes no debug line costs
        // nothing more. (The session's was read when the session was made.)
        let logger: Logger?
        if let own = task.originalRequest.logger {
            logger = own.logLevel <= .debug ? own : nil
        } else {
            logger = observer?.logger
        }
        let metrics = observer?.metrics
        guard logger != nil || metrics != nil else { return }
        // The request's fields are read in place: a copy of the request would retain all of it.
        let method = task.originalRequest.method.rawValue
        let observation = TaskObservation(taskID: task.taskIdentifier, logger: logger,
                                          metrics: metrics?.requests(method: method, host: prepared.origin.host, port: prepared.origin.port))
        self.observation = observation
        // Checked here as well as in `log`: the arguments' closures would retain what they
        // capture on every task, lines taken or not (metrics alone take none).
        guard logger != nil else { return }
        observation.log(.trace, "task started", [LogKey.method: "\(method)",
                                                 LogKey.url: "\(LogRedaction.url(self.task.originalRequest.url))"])
    }

    /// The task found no connection to take at once and waits in its pool's queue.
    func observeQueued() {
        observation?.log(.trace, "waiting for a connection (none idle)")
    }

    /// A connection was assigned: new or reused, it is active now.
    func observeAssigned(_ connection: Exchange) {
        guard let observation else { return }
        connection.connectionObservation?.becameActive()
        guard observation.logger != nil else { return }
        observation.log(.trace, connection.hasServedRequests ? "reusing connection" : "using new connection",
                        connectionMetadata(connection))
    }

    private func connectionMetadata(_ connection: Exchange) -> Logger.Metadata {
        var metadata: Logger.Metadata = [LogKey.connectionID: "\(connection.connectionID)"]
        if let prepared {
            metadata[LogKey.serverAddress] = "\(prepared.origin.host)"
            metadata[LogKey.serverPort] = "\(prepared.origin.port)"
        }
        if let tls = connection.tlsTransport {
            metadata["tls.protocol.version"] = "\(tls.protocolVersion)"
            metadata["tls.cipher"] = "\(tls.cipherSuite ?? "none")"
            metadata["tls.resumed"] = "\(tls.isSessionReused)"
        }
        return metadata
    }

    /// The task ended (SessionEngine.runnerFinished).
    func observeFinished(error: NetworkingError?) {
        guard let observation else { return }
        let version = head.map { HTTPClientMetrics.protocolVersion(major: $0.versionMajor, minor: $0.versionMinor) }
        observation.finished(status: head?.status ?? 0, protocolVersion: version, error: error)
    }

    /// The request is sent again on a new connection (its reused one failed before any answer).
    func observeRetry(after error: NetworkingError) {
        observation?.log(.debug, "retrying on a new connection: the reused one failed", [LogKey.error: "\(error)"])
    }

    /// The session's retrier asked for another attempt `delay` seconds after `reason` (a
    /// status, an error code).
    func observeRetryScheduled(after reason: String, delay: TimeInterval) {
        observation?.log(.debug, "retrying as the session's retrier asked", [LogKey.reason: "\(reason)", "delay": "\(delay)"])
    }

    /// A redirect is followed from `currentRequest` to `next`.
    func observeRedirect(to next: Request, status: Int) {
        guard let observation else { return }
        let from = currentRequest.url
        observation.log(.debug, "following redirect", [
            LogKey.status: "\(status)",
            "from": "\(LogRedaction.url(from))",
            "to": "\(LogRedaction.url(next.url))",
            LogKey.method: "\(next.method.rawValue)",
        ])
    }
}
