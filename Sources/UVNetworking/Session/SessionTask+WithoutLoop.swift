/// Ending a task that its loop cannot end: the loop was shut down before it ran the task, or
/// before a download's file was closed.
extension SessionTask {
    /// Completes the task with `error`, off the loop, unless it has already completed: delivered
    /// like any failure (serializer skipped, completion handler or awaiting caller, stream
    /// ended). Safe from any thread; at most one completion wins, since every path marks the
    /// task completed under its lock first.
    func completeWithoutLoop(_ error: NetworkingError) {
        var error = error
        error.failingURL = error.failingURL ?? currentRequest.url
        let failure = error
        let claimed = snapshot.withLock { snapshot -> Bool in
            guard snapshot.state != .completed else { return false }
            snapshot.state = .completed
            snapshot.error = failure
            return true
        }
        guard claimed else { return }
        bodyStream?.finish(error: failure)
        manager.taskFinished(self)
        let finished = SessionEngine.FinishedTask(task: self, head: nil, body: [], error: failure)
        let delivery = manager.deliverySnapshot()
        delivery.group.enter()
        manager.workers.run {
            CompletionDelivery.run([finished], with: delivery)
            delivery.group.leave()
        }
    }
}
