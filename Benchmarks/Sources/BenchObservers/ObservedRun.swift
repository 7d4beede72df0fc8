import CoreMetrics
import Logging
import Synchronization
import UVNetworking

/// `--observe` (uvbench) and the observed gate (uvgate): a session that logs and measures, to
/// weigh what turning observability on costs the library itself (the backend here does next to
/// nothing: a logger at .info that takes none of the library's lines, and metrics that only add
/// to an atomic).
public enum ObservedRun {
    /// Gives `configuration` the logger and the counting metrics factory.
    public static func configure(_ configuration: inout SessionConfiguration) {
        var logger = Logger(label: "uvbench") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .info
        configuration.backgroundActivityLogger = logger
        configuration.metricsFactory = CountingMetricsFactory()
    }
}

/// Handlers that count what they are given, nothing more.
public final class CountingMetricsFactory: MetricsFactory {
    /// One handler type for every kind of metric: an atomic total.
    public final class Handler: CounterHandler, FloatingPointCounterHandler, MeterHandler, RecorderHandler, TimerHandler {
        let total = Atomic<Int64>(0)
        public func increment(by amount: Int64) { total.wrappingAdd(amount, ordering: .relaxed) }
        public func increment(by amount: Double) { total.wrappingAdd(Int64(amount), ordering: .relaxed) }
        public func decrement(by amount: Double) { total.wrappingSubtract(Int64(amount), ordering: .relaxed) }
        public func set(_ value: Int64) { total.store(value, ordering: .relaxed) }
        public func set(_ value: Double) { total.store(Int64(value), ordering: .relaxed) }
        public func record(_ value: Int64) { total.wrappingAdd(1, ordering: .relaxed) }
        public func record(_ value: Double) { total.wrappingAdd(1, ordering: .relaxed) }
        public func recordNanoseconds(_ duration: Int64) { total.wrappingAdd(1, ordering: .relaxed) }
        public func reset() { total.store(0, ordering: .relaxed) }
    }

    /// A factory whose every handler counts.
    public init() {}

    public func makeCounter(label: String, dimensions: [(String, String)]) -> CounterHandler { Handler() }
    public func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> FloatingPointCounterHandler { Handler() }
    public func makeMeter(label: String, dimensions: [(String, String)]) -> MeterHandler { Handler() }
    public func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> RecorderHandler { Handler() }
    public func makeTimer(label: String, dimensions: [(String, String)]) -> TimerHandler { Handler() }
    public func destroyCounter(_ handler: CounterHandler) {}
    public func destroyFloatingPointCounter(_ handler: FloatingPointCounterHandler) {}
    public func destroyMeter(_ handler: MeterHandler) {}
    public func destroyRecorder(_ handler: RecorderHandler) {}
    public func destroyTimer(_ handler: TimerHandler) {}
}
