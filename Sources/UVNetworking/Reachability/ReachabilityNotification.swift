import Foundation

extension Notification.Name {
    /// Posted by a `NetworkReachabilityManager` at each change of its status, on its
    /// `statusChangeQueue` right after the status-change handler: AFNetworking's
    /// AFNetworkingReachabilityDidChangeNotification. The object is the manager; the userInfo's
    /// `NetworkingReachabilityNotificationKey.status` holds the new `NetworkReachabilityStatus`.
    ///
    /// The status is advisory: react to it (show that the network is gone, retry when it returns),
    /// never hold a request back on it.
    public static let networkingReachabilityDidChange = Notification.Name("UVNetworkingReachabilityDidChangeNotification")
}

/// The userInfo keys of `Notification.Name.networkingReachabilityDidChange`.
public enum NetworkingReachabilityNotificationKey {
    /// The new `NetworkReachabilityStatus` (AFNetworking's AFNetworkingReachabilityNotificationStatusItem).
    public static let status = "UVNetworkingReachabilityNotificationStatusItem"
}
