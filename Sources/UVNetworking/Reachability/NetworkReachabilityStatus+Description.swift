extension NetworkReachabilityStatus {
    /// The status in words, as AFNetworking's AFStringFromNetworkReachabilityStatus says it:
    /// "Unknown", "Not Reachable", "Reachable via Ethernet", "Reachable via WiFi", "Reachable via
    /// Cellular", and "Reachable" for any other interface (loopback, tunnels).
    public var localizedDescription: String {
        switch self {
        case .unknown: return "Unknown"
        case .notReachable: return "Not Reachable"
        case .reachable(.ethernet): return "Reachable via Ethernet"
        case .reachable(.wifi): return "Reachable via WiFi"
        case .reachable(.cellular): return "Reachable via Cellular"
        case .reachable(.other): return "Reachable"
        }
    }
}
