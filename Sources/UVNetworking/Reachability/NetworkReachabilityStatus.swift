/// What a reachability manager knows about its target: AFNetworking's status, read on Linux.
///
/// `unknown` until the first reading; `notReachable` when no route leads to the target over an
/// interface that is up, has carrier and has an address; otherwise `reachable`, with the kind of
/// interface the route leaves by.
public enum NetworkReachabilityStatus: Sendable, Hashable {
    /// No reading yet (monitoring not started, or the first reading still under way).
    case unknown
    /// No usable route to the target.
    case notReachable
    /// A usable route to the target leaves over an interface of this kind.
    case reachable(NetworkInterfaceKind)
}

/// The kind of interface a route leaves by, as sysfs tells it: AFNetworking's WiFi and WWAN on
/// Linux, with wired Ethernet and everything else named on their own.
public enum NetworkInterfaceKind: Sendable, Hashable {
    /// Wired Ethernet, and Ethernet-like virtual links (veth, bridges, bonds).
    case ethernet
    /// A wireless LAN interface (sysfs `wireless`, or DEVTYPE=wlan).
    case wifi
    /// A mobile broadband interface (DEVTYPE=wwan), AFNetworking's WWAN.
    case cellular
    /// Anything else: loopback, tunnels, point-to-point links.
    case other
}
