/// The kind of traffic a request carries, as NSURLRequest.NetworkServiceType says it: what the
/// network may do with its packets. On Linux a connection for a request of a type other than
/// `.default` marks its packets with the DiffServ code point Apple's stack gives that service
/// class (RFC 4594's classes, in the IPv4 TOS / IPv6 Traffic Class byte, from its first SYN)
/// and sets the socket's priority (SO_PRIORITY, which the local queueing disciplines read).
/// Requests of different types never share a connection.
///
/// Routers honour DSCP only where the network is set up to; the local priority applies on this
/// machine only. Its raw value is the case's name, as resume data keeps it.
public enum NetworkServiceType: String, Sendable, Hashable, CaseIterable, Codable {
    /// Best effort: no marking (DSCP 0, priority 0).
    case `default`
    /// Interactive video (AF41, DSCP 34).
    case video
    /// Bulk transfers nobody waits for (CS1, DSCP 8: lower than best effort).
    case background
    /// Interactive voice (EF, DSCP 46).
    case voice
    /// Data a user waits for (AF21, DSCP 18).
    case responsiveData
    /// Streaming audio and video (AF31, DSCP 26).
    case avStreaming
    /// Responsive audio and video (CS4, DSCP 32).
    case responsiveAV
    /// Call signaling (CS5, DSCP 40).
    case callSignaling

    /// The DiffServ code point (6 bits).
    public var dscp: UInt8 {
        switch self {
        case .default: return 0
        case .video: return 34
        case .background: return 8
        case .voice: return 46
        case .responsiveData: return 18
        case .avStreaming: return 26
        case .responsiveAV: return 32
        case .callSignaling: return 40
        }
    }

    /// The socket priority (SO_PRIORITY; Linux's TC_PRIO_ bands, within the 0...6 an
    /// unprivileged process may set): bulk for background, interactive-bulk for data and
    /// streaming, interactive for voice, responsive AV and signaling.
    public var socketPriority: Int32 {
        switch self {
        case .default: return 0
        case .background: return 2
        case .responsiveData, .avStreaming, .video: return 4
        case .voice, .responsiveAV, .callSignaling: return 6
        }
    }
}
