import CoreMetrics
import Logging

/// What a session reports to beyond its callers: its background logger and its metrics. Made
/// once per engine, and only when there is something to report to: a session with neither has
/// none (`SessionEngine.observer` is nil), so its requests pay one nil check per event and
/// build no message, metadata or metric.
///
/// Loop-confined (its metric handles are cached per engine, so no lock is taken).
final class SessionObserver {
    /// `SessionConfiguration.backgroundActivityLogger`.
    let logger: Logger?
    /// nil when no metrics backend is configured: neither `metricsFactory` nor a bootstrapped
    /// `MetricsSystem` (whose default is swift-metrics' no-op handler).
    let metrics: HTTPClientMetrics?

    /// nil when the configuration asks for nothing to be reported.
    init?(configuration: SessionConfiguration) {
        // Read once per engine: `MetricsSystem.factory` looks up a task-local too.
        let factory = configuration.metricsFactory ?? MetricsSystem.factory
        let metrics = factory is NOOPMetricsHandler ? nil : HTTPClientMetrics(factory: factory)
        guard configuration.backgroundActivityLogger != nil || metrics != nil else { return nil }
        self.logger = configuration.backgroundActivityLogger
        self.metrics = metrics
    }
}

extension Logger {
    /// Logs at `level` with `metadata`, building neither unless the logger takes the level.
    @inline(__always)
    func emit(_ level: Logger.Level, _ message: @autoclosure () -> Logger.Message,
              _ metadata: @autoclosure () -> Logger.Metadata) {
        guard logLevel <= level else { return }
        log(level: level, message(), metadata: metadata())
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
