import CoreMetrics
import Logging

/// What a session reports to beyond its callers: its background logger and its metrics. Made
/// once per engine, and only when there is something to report to: a session with neither has
/// none (`SessionEngine.observer` is nil), so its requests pay one nil check per event and
/// build no message, metadata or metric.
///
/// Loop-confined (its metric handles are cached per engine, so no lock is taken).
final class SessionObserver {
    /// `SessionConfiguration.backgroundActivityLogger`, when it takes debug lines (every line
    /// the library logs is debug or trace). Its level is read once, here: a Logger is a value,
    /// so its level changes only in a copy the session does not hold.
    let logger: Logger?
    /// nil when no metrics backend is configured: neither `metricsFactory` nor a bootstrapped
    /// `MetricsSystem` (whose default is swift-metrics' no-op handler).
    let metrics: HTTPClientMetrics?

    /// nil when the configuration asks for nothing to be reported.
    init?(configuration: SessionConfiguration) {
        // Read once per engine: `MetricsSystem.factory` looks up a task-local too.
        let factory = configuration.metricsFactory ?? MetricsSystem.factory
        let metrics = factory is NOOPMetricsHandler ? nil : HTTPClientMetrics(factory: factory)
        let logger = configuration.backgroundActivityLogger.flatMap { $0.logLevel <= .debug ? $0 : nil }
        guard logger != nil || metrics != nil else { return nil }
        self.logger = logger
        self.metrics = metrics
    }
}

/// The metadata keys the library logs with (docs/observability.md lists them).
enum LogKey {
    static let taskID = "uv.task.id"
    static let connectionID = "uv.connection.id"
    static let method = "http.request.method"
    static let url = "url.full"
    static let status = "http.response.status_code"
    static let serverAddress = "server.address"
    static let serverPort = "server.port"
    static let error = "error"
    static let reason = "reason"
}
