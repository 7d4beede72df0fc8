import Foundation

/// Ending a task that its loop cannot end: the loop refused the job that would have run or
/// cancelled the task, or the one that finishes a download once its file is closed.
extension SessionTask {
    /// Completes the task with `error`, off the loop, once the loop has stopped, unless it has
    /// completed by then: a loop that refuses jobs may still be about to end its running tasks
    /// (its last job), and this task may be one of them. Delivered like any failure (serializer
    /// skipped, completion handler or awaiting caller, stream ended). Safe from any thread.
    func completeWithoutLoop(_ error: NetworkingError) {
        var error = error
        error.failingURL = error.failingURL ?? currentRequest.url
        let failure = error
        manager.loop(for: self).whenStopped { self.finishWithoutLoop(failure) }
    }

    private func finishWithoutLoop(_ failure: NetworkingError) {
        guard recordCompletion(error: failure) else { return }
        bodyStream?.finish(error: failure)
        manager.taskFinished(self)
        let finished = SessionEngine.FinishedTask(task: self, head: nil, body: Data(), error: failure)
        let delivery = manager.deliverySnapshot(on: manager.loop(for: self))
        delivery.group.enter()
        manager.workers.run {
            CompletionDelivery.run([finished], with: delivery)
            delivery.group.leave()
        }
    }
}
