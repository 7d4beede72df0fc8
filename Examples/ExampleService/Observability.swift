import Foundation
import Logging
import UVNetworking

/// Where the example wires its instruments into the library: the process-wide backends once at
/// start, the session's instruments in its configuration, and a task's own on its request. Each
/// function is the one place its kind of instrument is set, so the example shows all of them
/// side by side.
enum Observability {
    /// Process-wide bootstraps that can run only once: the metrics backend
    /// (`MetricsSystem.bootstrap`) and the tracer (`InstrumentationSystem.bootstrap`), after
    /// `LoggingSystem.bootstrap`, which main does first. The example bootstraps none yet: the
    /// library then records nothing and costs nothing for it.
    static func bootstrap(logger: Logger) {
        logger.debug("no metrics or tracing backend bootstrapped")
    }

    /// The session's instruments: its background logger, metrics factory and tracer go in the
    /// configuration (nil: the global one, or none). The example sets none yet: the session
    /// logs, measures and traces nothing.
    static func configure(_ configuration: inout SessionConfiguration, logger: Logger) {}

    /// A fetch's request, with what belongs to that task alone (its own logger, so its log lines
    /// carry the fetcher's metadata).
    static func request(for url: URL, logger: Logger) -> Request {
        Request(url: url)
    }
}
