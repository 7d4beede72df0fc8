import CoreMetrics
import Dispatch
import Logging

/// What one task reports while it runs: its log lines (to its request's logger, else the
/// session's background one) and its request metrics. Made when the task starts, only when
/// something listens (`TaskRunner.observeStart`); a runner without one pays a nil check per
/// event. Loop-confined.
final class TaskObservation {
    let taskID: Int
    /// nil when no logger takes debug lines (every line here is debug or trace).
    let logger: Logger?
    let metrics: HTTPClientMetrics?
    let method: String
    let host: String
    let port: Int
    /// When the task started, in uptime nanoseconds (only measured with metrics).
    let startedAt: UInt64
    /// `http.client.active_requests` for the task's method and origin, raised while it runs.
    let active: Meter?

    init(taskID: Int, logger: Logger?, metrics: HTTPClientMetrics?, method: String, host: String, port: Int) {
        self.taskID = taskID
        self.logger = logger
        self.metrics = metrics
        self.method = method
        self.host = host
        self.port = port
        if let metrics {
            startedAt = DispatchTime.now().uptimeNanoseconds
            let active = metrics.activeRequests(method: method, host: host, port: port)
            active.increment()
            self.active = active
        } else {
            startedAt = 0
            active = nil
        }
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

    /// The task ended (`status` 0 without a response): its duration is recorded, it no longer
    /// counts as active.
    func finished(status: Int, error: NetworkingError?) {
        if let metrics {
            let elapsed = DispatchTime.now().uptimeNanoseconds &- startedAt
            let errorType = HTTPClientMetrics.errorType(error, status: status)
            metrics.requestDuration(method: method, status: status, host: host, port: port, errorType: errorType)
                .recordNanoseconds(Int64(clamping: elapsed))
            active?.decrement()
        }
        if let error {
            log(.debug, "task failed", status > 0 ? [LogKey.error: "\(error)", LogKey.status: "\(status)"] : [LogKey.error: "\(error)"])
        } else {
            log(.trace, "task finished", [LogKey.status: "\(status)"])
        }
    }
}
