import CoreMetrics
import Glibc
import Logging

/// What one task reports while it runs: its log lines (to its request's logger, else the
/// session's background one) and its request metrics. Made when the task starts, only when
/// something listens (`TaskRunner.observeStart`); a runner without one pays a nil check per
/// event. Loop-confined. A value kept in the runner, not an object: one more allocation per
/// observed task cost more than the few words it adds to every runner.
struct TaskObservation {
    let taskID: Int
    /// nil when no logger takes debug lines (every line here is debug or trace).
    let logger: Logger?
    /// The metrics of the task's method and origin; nil without a metrics backend.
    let metrics: RequestMetrics?
    /// When the task started, in monotonic nanoseconds (`now()`; only measured with metrics).
    let startedAt: UInt64

    init(taskID: Int, logger: Logger?, metrics: RequestMetrics?) {
        self.taskID = taskID
        self.logger = logger
        self.metrics = metrics
        if let metrics {
            startedAt = Self.now()
            metrics.active.increment()
        } else {
            startedAt = 0
        }
    }

    /// Monotonic nanoseconds, read twice per task with metrics: the clock itself, where
    /// `DispatchTime.now()` goes through libdispatch's own time conversions.
    @inline(__always)
    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }

    /// Logs with the task's identifier as metadata, building nothing unless the level is taken.
    @inline(__always)
    func log(_ level: Logger.Level, _ message: @autoclosure () -> Logger.Message,
             _ metadata: @autoclosure () -> Logger.Metadata = [:]) {
        guard let logger, logger.logLevel <= level else { return }
        var all = metadata()
        all[LogKey.taskID] = "\(taskID)"
        logger.log(level: level, message(), metadata: all)
    }

    /// The task ended (`status` 0 and `protocolVersion` nil without a response): its duration
    /// is recorded, it no longer counts as active.
    func finished(status: Int, protocolVersion: String?, error: NetworkingError?) {
        if let metrics {
            let elapsed = Self.now() &- startedAt
            metrics.duration(status: status, protocolVersion: protocolVersion, errorType: HTTPClientMetrics.errorType(error, status: status))
                .recordNanoseconds(Int64(clamping: elapsed))
            metrics.active.decrement()
        }
        guard logger != nil else { return }
        if let error {
            log(.debug, "task failed", status > 0 ? [LogKey.error: "\(error)", LogKey.status: "\(status)"] : [LogKey.error: "\(error)"])
        } else {
            log(.trace, "task finished", [LogKey.status: "\(status)"])
        }
    }
}
