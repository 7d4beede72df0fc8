import Foundation
import HTTPTypes

/// A finished download, on a worker: AFNetworking's destination semantics, then the delivery.
///
/// With a destination, the file is moved where the closure says (no existing file is replaced;
/// the move fails instead, as AFNetworking's does); the move posts its notification, and a
/// failure completes the task with `cannotMoveFile` (and no URL) after the temporary file is
/// removed. Without one, the handler gets the temporary file, removed once it returns (inside
/// the completion group). The
/// serializer does not run. A resume-data handler is called just before the completion handler.
enum DownloadDelivery {
    static func run(_ finished: SessionEngine.FinishedTask, with target: DeliveryTarget) {
        let task = finished.task as! DownloadTask
        let workers = task.manager.workers
        let notifies = target.hooks?.postsNotifications ?? false
        var outcome = CompletionDelivery.Outcome(task: task, response: nil, object: nil, error: finished.error)
        var asyncResult: Result<(URL, HTTPResponse), any Error>?

        let resumeData = finished.download?.resumeData
        if let handler = task.takeResumeDataHandler() {
            outcome.beforeHandler = { handler(resumeData) }
        } else if resumeData != nil {
            // Nobody is left to take it (a handler that came too late was answered nil): the
            // partial file it names would never be removed otherwise.
            removeFile(atPath: task.plan.temporaryFile.path)
        }

        if let error = finished.error {
            outcome.response = error.response
            asyncResult = .failure(error)
        } else if let head = finished.head, let file = finished.download?.fileURL {
            let response = head.httpResponse
            task.cacheResponse(response)
            outcome.response = response
            if task.asyncOutcome != nil {
                // An awaiting caller owns the temporary file from now on.
                asyncResult = .success((file, response))
            } else if let destination = task.destination {
                let target = destination(file, response)
                do {
                    try FileManager.default.moveItem(at: file, to: target)
                    outcome.object = target
                    outcome.assetPath = target
                    if notifies { TaskNotifications.postMove(of: task, from: file, to: target, error: nil) }
                } catch {
                    let moveError = NetworkingError(.cannotMoveFile, "moving the downloaded file \(file.path) to \(target.path) failed: \(error)",
                                                    failingURL: task.currentRequest.url, response: response,
                                                    underlyingError: error)
                    removeFile(atPath: file.path)
                    outcome.error = moveError
                    if notifies { TaskNotifications.postMove(of: task, from: file, to: target, error: moveError) }
                }
            } else {
                outcome.object = file
                // Valid while the handler runs, as URLSession's: then removed, off the queue but
                // inside the completion group, so a program that waits on the group before it
                // exits leaves no file behind.
                let group = target.group
                outcome.afterHandler = {
                    group.enter()
                    workers.run {
                        removeFile(atPath: file.path)
                        group.leave()
                    }
                }
            }
        } else {
            let error = NetworkingError(.malformedResponse, "the download ended without a response", failingURL: task.currentRequest.url)
            outcome.error = error
            asyncResult = .failure(error)
        }

        if let asyncOutcome = task.asyncOutcome, let asyncResult { asyncOutcome.deliver(asyncResult) }
        if target.hasHooks || finished.hooks != nil {
            var hooked = finished
            hooked.delivered = outcome
            CompletionDelivery.runHooked([hooked], with: target)
        } else if task.completionHandler != nil || outcome.beforeHandler != nil || outcome.afterHandler != nil {
            CompletionDelivery.deliverAlone(outcome, with: target)
        }
    }

    private static func removeFile(atPath path: String) {
        POSIXFile.remove(path)
    }
}
