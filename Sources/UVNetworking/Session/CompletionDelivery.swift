import Dispatch
import Foundation
import HTTPTypes

/// Where and how completions are delivered, read from the manager when a batch leaves the loop.
struct DeliveryTarget: @unchecked Sendable {
    // @unchecked: DispatchQueue and DispatchGroup are thread-safe; the serializer is Sendable.
    var queue: DispatchQueue
    var group: DispatchGroup
    var serializer: any ResponseSerializer
    /// The manager's hooks when any is set, read once per batch.
    var hooks: SessionHooks.Storage? = nil
}

/// Runs on a worker thread: builds each finished task's response and stores its cookies, serializes
/// it, then calls the completion handlers on the completion queue inside the completion group, as
/// AFNetworking does with dispatch_group_async. A batch (the tasks that finished in one loop
/// iteration) costs one dispatch.
enum CompletionDelivery {
    struct Outcome: @unchecked Sendable {
        // @unchecked: the object was made on this worker and is handed over, never shared.
        var task: SessionTask
        var response: HTTPResponse?
        var object: Any?
        var error: (any Error)?
        /// The body handed to the serializer (hooked deliveries only).
        var data: Data? = nil
        /// A download's file once moved to its destination (the did-complete notification's
        /// asset path).
        var assetPath: URL? = nil
        /// Runs on the completion queue just before the completion handler (a download's
        /// resume data handed over).
        var beforeHandler: (@Sendable () -> Void)? = nil
        /// Runs just after the completion handler (a download's temporary file removed).
        var afterHandler: (@Sendable () -> Void)? = nil
    }

    static func run(_ batch: [SessionEngine.FinishedTask], with target: DeliveryTarget) {
        var outcomes: [Outcome] = []
        outcomes.reserveCapacity(batch.count)
        var hooked: [SessionEngine.FinishedTask] = []
        for var finished in batch {
            // Once per task, before anything reads the response: builds it and stores its cookies.
            finished.resolveResponse()
            if finished.task is DownloadTask {
                // Its own job: the destination closure and the move (a copy, across file systems)
                // must not hold up the rest of the batch.
                let download = finished
                target.group.enter()
                finished.task.manager.workers.run {
                    DownloadDelivery.run(download, with: target)
                    target.group.leave()
                }
                continue
            }
            if let receiver = finished.task.outcomeReceiver {
                // An async caller: serialized here, its continuation resumed from this worker.
                receiver.receive(finished, serializer: target.serializer)
                // Its manager hooks and notification still run, on the completion queue; the
                // caller may resume before they do (there is no completion block to order after).
                // (Its hook state exists for metrics alone unless hooks are on.)
                if target.hooks != nil || finished.hooks?.channel != nil { hooked.append(finished) }
                continue
            }
            if target.hooks != nil || finished.hooks != nil {
                hooked.append(finished)
                continue
            }
            if let error = finished.error {
                guard finished.task.completionHandler != nil else { continue }
                // A transport failure skips the serializer: (response, nil, error).
                outcomes.append(Outcome(task: finished.task, response: error.response, object: nil, error: error))
                continue
            }
            guard let response = finished.response else { continue }
            guard finished.task.completionHandler != nil else { continue }
            let data = finished.body
            do {
                let object = try target.serializer.responseObject(for: response, data: data)
                outcomes.append(Outcome(task: finished.task, response: response, object: object, error: nil))
            } catch var error as NetworkingError {
                error.failingURL = error.failingURL ?? finished.task.originalRequest.url
                // AFNetworking delivers an object with the error when only the status was rejected.
                outcomes.append(Outcome(task: finished.task, response: response, object: error.responseObject, error: error))
            } catch {
                outcomes.append(Outcome(task: finished.task, response: response, object: nil, error: error))
            }
        }
        if !hooked.isEmpty { runHooked(hooked, with: target) }
        guard !outcomes.isEmpty else { return }
        let ready = outcomes
        target.queue.async(group: target.group) {
            for outcome in ready {
                outcome.task.completionHandler?(outcome.response, outcome.object, outcome.error)
            }
        }
    }

    /// Calls one outcome's completion handler with what comes before and after it, on the
    /// completion queue.
    static func deliverAlone(_ outcome: Outcome, with target: DeliveryTarget) {
        target.queue.async(group: target.group) {
            outcome.beforeHandler?()
            outcome.task.completionHandler?(outcome.response, outcome.object, outcome.error)
            outcome.afterHandler?()
        }
    }
}
