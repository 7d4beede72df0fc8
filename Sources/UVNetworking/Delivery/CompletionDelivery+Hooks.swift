import Dispatch
import Foundation
import HTTPTypes

/// Delivery for tasks that ran while the manager had hooks or notifications on. Per task, on the
/// completion queue: the metrics hook, the did-complete hook, the completion handler, then the
/// did-complete notification on the main queue (as AFNetworking posts it from inside its
/// completion block). A task whose hooks used its channel (response, data, body-sent calls)
/// completes through that channel, so its completion never overtakes them.
extension CompletionDelivery {
    static func runHooked(_ batch: [SessionEngine.FinishedTask], with target: DeliveryTarget, handlers: Handlers = .queued) {
        // Hooks unset while the task ran: nothing to call, but the channel order still holds.
        // Shared by reference: each task's delivery reading the struct copied every closure.
        let shared = SharedHooks(target.hooks ?? SessionHooks.Storage())
        let serializer = target.serializer
        var direct: [@Sendable () -> Void] = []
        for finished in batch {
            let task = finished.task
            let outcome = finished.delivered ?? serialize(finished, with: serializer,
                                                          wantsObject: task.completionHandler != nil || shared.storage.postsNotifications)
            let metrics = finished.hooks?.metrics
            let transportError = finished.error
            let deliver: @Sendable () -> Void = {
                if let metrics, let hook = shared.storage.taskDidFinishCollectingMetrics { hook(task, metrics) }
                shared.storage.taskDidComplete?(task, transportError)
                outcome?.beforeHandler?()
                if let outcome { task.completionHandler?(outcome.response, outcome.object, outcome.error) }
                if shared.storage.postsNotifications {
                    TaskNotifications.postDidComplete(task, outcome: outcome, serializer: serializer, metrics: metrics)
                }
                outcome?.afterHandler?()
            }
            if let channel = finished.hooks?.channel {
                channel.send(through: task.manager, for: task, deliver)
            } else if handlers == .here {
                deliver()
            } else {
                direct.append(deliver)
            }
        }
        guard !direct.isEmpty else { return }
        let ready = direct
        target.queue.async(group: target.group) {
            for deliver in ready { deliver() }
        }
    }

    /// What `run` does for one task, keeping the body: the transport error as it is, or the
    /// serializer's object and error. Nil when nobody wants the object (the response is still
    /// cached on the task).
    private static func serialize(_ finished: SessionEngine.FinishedTask, with serializer: any ResponseSerializer,
                                  wantsObject: Bool) -> Outcome? {
        if let error = finished.error {
            guard wantsObject else { return nil }
            return Outcome(task: finished.task, response: error.response, object: nil, error: error, data: Data())
        }
        guard let response = finished.response else { return nil }
        guard wantsObject else { return nil }
        let data = finished.body
        do {
            let object = try serializer.responseObject(for: response, data: data)
            return Outcome(task: finished.task, response: response, object: object, error: nil, data: data)
        } catch var error as NetworkingError {
            error.failingURL = error.failingURL ?? finished.task.originalRequest.url
            return Outcome(task: finished.task, response: response, object: error.responseObject, error: error, data: data)
        } catch {
            return Outcome(task: finished.task, response: response, object: nil, error: error, data: data)
        }
    }
}

/// One batch's hook closures, shared by the deliveries of its tasks.
private final class SharedHooks: Sendable {
    let storage: SessionHooks.Storage

    init(_ storage: SessionHooks.Storage) { self.storage = storage }
}

/// Posts the task notifications on the main queue to `NotificationCenter.default`.
enum TaskNotifications {
    /// Carries a userInfo (whose values are `Any`) to the main queue; built here, read there only.
    private struct UserInfo: @unchecked Sendable {
        var values: [AnyHashable: Any]?
    }

    static func post(_ name: Notification.Name, for task: SessionTask) {
        post(name, task, UserInfo(values: nil))
    }

    /// A download's move to its destination failed (`error`) or succeeded (nil).
    static func postMove(of task: DownloadTask, from temporaryFile: URL, to destination: URL, error: NetworkingError?) {
        var values: [AnyHashable: Any] = [NetworkingDownloadTaskMoveKey.temporaryFileURL: temporaryFile,
                                          NetworkingDownloadTaskMoveKey.destinationURL: destination]
        if let error { values[NetworkingDownloadTaskMoveKey.error] = error }
        post(error == nil ? .networkingDownloadTaskDidMoveFile : .networkingDownloadTaskDidFailToMoveFile, task,
             UserInfo(values: values))
    }

    static func postDidComplete(_ task: SessionTask, outcome: CompletionDelivery.Outcome?,
                                serializer: any ResponseSerializer, metrics: TaskMetrics?) {
        var values: [AnyHashable: Any] = [NetworkingTaskDidCompleteKey.responseSerializer: serializer]
        if let data = outcome?.data { values[NetworkingTaskDidCompleteKey.responseData] = data }
        if let object = outcome?.object { values[NetworkingTaskDidCompleteKey.serializedResponse] = object }
        if let error = outcome?.error { values[NetworkingTaskDidCompleteKey.error] = error }
        if let assetPath = outcome?.assetPath { values[NetworkingTaskDidCompleteKey.assetPath] = assetPath }
        if let metrics { values[NetworkingTaskDidCompleteKey.sessionTaskMetrics] = metrics }
        post(.networkingTaskDidComplete, task, UserInfo(values: values))
    }

    private static func post(_ name: Notification.Name, _ task: SessionTask, _ userInfo: UserInfo) {
        DispatchQueue.main.async {
            NotificationCenter.default.post(name: name, object: task, userInfo: userInfo.values)
        }
    }
}

extension SessionManager {
    func postTaskNotification(_ name: Notification.Name, for task: SessionTask) {
        TaskNotifications.post(name, for: task)
    }
}
