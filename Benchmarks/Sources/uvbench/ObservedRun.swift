import CoreMetrics
import Logging
import Synchronization
import UVNetworking

/// `--observe`: a session that logs and measures, to weigh what turning observability on costs
/// the library itself (the backend here does next to nothing: a logger at .info that takes none
/// of the library's lines, and metrics that only add to an atomic).
enum ObservedRun {
    static func configure(_ configuration: inout SessionConfiguration) {
        var logger = Logger(label: "uvbench") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .info
        configuration.backgroundActivityLogger = logger
        configuration.metricsFactory = CountingMetricsFactory()
    }
}

/// Handlers that count what they are given, nothing more.
final class CountingMetricsFactory: MetricsFactory {
    final class Handler: CounterHandler, FloatingPointCounterHandler, MeterHandler, RecorderHandler, TimerHandler {
        let total = Atomic<Int64>(0)
        func increment(by amount: Int64) { total.wrappingAdd(amount, ordering: .relaxed) }
        func increment(by amount: Double) { total.wrappingAdd(Int64(amount), ordering: .relaxed) }
        func decrement(by amount: Double) { total.wrappingSubtract(Int64(amount), ordering: .relaxed) }
        func set(_ value: Int64) { total.store(value, ordering: .relaxed) }
        func set(_ value: Double) { total.store(Int64(value), ordering: .relaxed) }
        func record(_ value: Int64) { total.wrappingAdd(1, ordering: .relaxed) }
        func record(_ value: Double) { total.wrappingAdd(1, ordering: .relaxed) }
        func recordNanoseconds(_ duration: Int64) { total.wrappingAdd(1, ordering: .relaxed) }
        func reset() { total.store(0, ordering: .relaxed) }
    }

    func makeCounter(label: String, dimensions: [(String, String)]) -> CounterHandler { Handler() }
    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> FloatingPointCounterHandler { Handler() }
    func makeMeter(label: String, dimensions: [(String, String)]) -> MeterHandler { Handler() }
    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> RecorderHandler { Handler() }
    func makeTimer(label: String, dimensions: [(String, String)]) -> TimerHandler { Handler() }
    func destroyCounter(_ handler: CounterHandler) {}
    func destroyFloatingPointCounter(_ handler: FloatingPointCounterHandler) {}
    func destroyMeter(_ handler: MeterHandler) {}
    func destroyRecorder(_ handler: RecorderHandler) {}
    func destroyTimer(_ handler: TimerHandler) {}
}
