import Foundation

/// What a session measured about one task, like URLSessionTaskMetrics; handed to
/// `SessionManager.taskDidFinishCollectingMetrics` and put in the did-complete notification.
///
/// Today it holds what the loop measures without extra work: when the task ran and whether its
/// request went out on a reused connection. Per-transaction timings (DNS, connect, TLS, request,
/// response) and redirects come with issue #5; their fields will be added then, so do not
/// construct this value expecting its shape to stay fixed.
public struct TaskMetrics: Sendable, Hashable, CustomStringConvertible {
    /// From the moment the task started on the session's loop (its first `resume()` reached the
    /// loop, or its cancellation if it never started) to the moment it ended there, before
    /// serialization. Wall-clock dates, so only meaningful within one process run.
    public var taskInterval: DateInterval
    /// Redirects followed. Always 0 until redirects exist (issue #5).
    public var redirectCount: Int
    /// Whether the request went out on a connection that had served an earlier request; nil
    /// when no response head arrived (the task failed or was cancelled before one).
    public var isReusedConnection: Bool?

    public init(taskInterval: DateInterval, redirectCount: Int = 0, isReusedConnection: Bool? = nil) {
        self.taskInterval = taskInterval
        self.redirectCount = redirectCount
        self.isReusedConnection = isReusedConnection
    }

    public var description: String {
        let reused = isReusedConnection.map { $0 ? "reused" : "new" } ?? "none"
        return "TaskMetrics(duration: \(taskInterval.duration) s, redirects: \(redirectCount), connection: \(reused))"
    }
}
