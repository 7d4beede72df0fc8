import Foundation

// AFNetworking's task notifications. They are posted on the main queue to
// `NotificationCenter.default`, with the task as the notification's `object`, once
// `SessionManager.postsTaskNotifications` is on (it is off by default: posting costs a main-queue
// dispatch per event, which a session doing tens of thousands of requests a second should not
// pay for nobody).

extension Notification.Name {
    /// A task started or resumed (AFNetworkingTaskDidResumeNotification). Posted only when the
    /// task's state really changed: a second `resume()` posts nothing.
    public static let networkingTaskDidResume = Notification.Name("UVNetworkingTaskDidResumeNotification")
    /// A running task was suspended (AFNetworkingTaskDidSuspendNotification). Posted only when
    /// the task's state really changed.
    public static let networkingTaskDidSuspend = Notification.Name("UVNetworkingTaskDidSuspendNotification")
    /// A task ended (AFNetworkingTaskDidCompleteNotification). Posted after its completion
    /// handler ran; `userInfo` holds the `NetworkingTaskDidCompleteKey` entries.
    public static let networkingTaskDidComplete = Notification.Name("UVNetworkingTaskDidCompleteNotification")
    /// A finished download could not be moved to its destination
    /// (AFURLSessionDownloadTaskDidFailToMoveFileNotification). Posted before the task's
    /// completion, which gets the same error (`cannotMoveFile`); `userInfo` holds the
    /// `NetworkingDownloadTaskMoveKey` entries, the error included.
    public static let networkingDownloadTaskDidFailToMoveFile = Notification.Name("UVNetworkingDownloadTaskDidFailToMoveFileNotification")
    /// A finished download was moved to its destination
    /// (AFURLSessionDownloadTaskDidMoveFileSuccessfullyNotification); `userInfo` holds the
    /// temporary and destination URLs.
    public static let networkingDownloadTaskDidMoveFile = Notification.Name("UVNetworkingDownloadTaskDidMoveFileNotification")
}

/// The `userInfo` keys of the download move notifications.
public enum NetworkingDownloadTaskMoveKey {
    /// Why the move failed (`NetworkingError`, code `cannotMoveFile`, the system's error as its
    /// `underlyingError`). Only in the failure notification.
    public static let error = "UVNetworkingDownloadTaskMoveErrorKey"
    /// The file the body was written to (`URL`); removed after a failed move.
    public static let temporaryFileURL = "UVNetworkingDownloadTaskMoveTemporaryFileURLKey"
    /// Where the destination closure asked the file to go (`URL`).
    public static let destinationURL = "UVNetworkingDownloadTaskMoveDestinationURLKey"
}

/// The `userInfo` keys of `Notification.Name.networkingTaskDidComplete`.
public enum NetworkingTaskDidCompleteKey {
    /// The response serializer that ran (`any ResponseSerializer`). Always present.
    public static let responseSerializer = "UVNetworkingTaskDidCompleteResponseSerializerKey"
    /// The raw response body (`Data`) of a data task; empty when the task failed before a
    /// response or the response had no body. Never present for downloads.
    public static let responseData = "UVNetworkingTaskDidCompleteResponseDataKey"
    /// What the serializer made of the response (`Any`), when it made something.
    public static let serializedResponse = "UVNetworkingTaskDidCompleteSerializedResponseKey"
    /// The error the completion handler received (`any Error`), when there was one.
    public static let error = "UVNetworkingTaskDidCompleteErrorKey"
    /// Where a download task's file was moved (`URL`, the destination), when it was
    /// (AFNetworking posts it only then).
    public static let assetPath = "UVNetworkingTaskDidCompleteAssetPathKey"
    /// The task's `TaskMetrics`, when the session measured them (it does for every task started
    /// while a hook or notifications were on).
    public static let sessionTaskMetrics = "UVNetworkingTaskDidCompleteSessionTaskMetrics"
}
