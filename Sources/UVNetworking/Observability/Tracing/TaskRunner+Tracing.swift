import Foundation

/// The runner's events on its task's span (TaskTrace). A task without a span skips each with
/// one nil check, inlined where the event happens.
extension TaskRunner {
    /// The task moves on to `request`: a redirect followed, or a download's restart.
    @inline(__always) func traceFollowed(to request: Request, isRedirect: Bool) {
        guard let trace = task.trace else { return }
        if isRedirect {
            trace.redirected(status: head?.status ?? 0, to: request.url)
        } else {
            trace.resent(reason: "restart")
        }
    }

    /// The request is sent again after its reused connection failed with `code`.
    @inline(__always) func traceResent(after code: NetworkingError.Code) {
        task.trace?.resent(reason: code.description)
    }
}
