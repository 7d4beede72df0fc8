import CoreMetrics
import Foundation
import Logging
import Prometheus
import Tracing
import UVNetworking

/// Where the example wires its instruments into the library: the process-wide backends once at
/// start, the session's instruments in its configuration, and a task's own on its request. Each
/// function is the one place its kind of instrument is set, so the example shows all of them
/// side by side.
enum Observability {
    /// The Prometheus registry every metric of the process goes to; main prints it at exit.
    static let registry = PrometheusCollectorRegistry()

    /// Process-wide bootstraps that can run only once, after `LoggingSystem.bootstrap` (main
    /// does it first) and before the session is made (a session reads the global metrics
    /// factory and tracer when it is made): Prometheus as the metrics backend, and the
    /// example's logging tracer.
    static func bootstrap(logger: Logger) {
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        InstrumentationSystem.bootstrap(LoggingTracer(logger: logger))
    }

    /// The session's instruments. Its background logger gets the connection and pool lines
    /// (at `.debug`, so only with `--verbose`). `metricsFactory` and `tracer` stay nil: the
    /// session uses the ones bootstrapped above.
    static func configure(_ configuration: inout SessionConfiguration, logger: Logger) {
        configuration.backgroundActivityLogger = logger
    }

    /// A fetch's request, with what belongs to that task alone: its own logger, so the library's
    /// lines about this task carry the fetcher's metadata (the round) next to `uv.task.id`.
    static func request(for url: URL, logger: Logger) -> Request {
        var request = Request(url: url)
        request.logger = logger
        return request
    }

    /// The Prometheus text exposition of every metric, as a scrape of `/metrics` would get it.
    static func metricsText() -> String {
        registry.emitToString()
    }
}

extension URL {
    /// The URL without its user and password, for the example's own log lines (the library
    /// never logs them; the example must not either).
    var withoutCredentials: String {
        guard user != nil || password != nil, var components = URLComponents(url: self, resolvingAgainstBaseURL: false)
        else { return absoluteString }
        components.user = nil
        components.password = nil
        return components.string ?? "(url)"
    }
}
