import Foundation

/// A cap on how fast a multipart body is uploaded: at most `packetSize` bytes, then a pause of
/// `delay` seconds before the next packet (AFNetworking's throttleBandwidthWithPacketSize:delay:).
///
/// Meant for slow, lossy links where a request sent as fast as possible fails more often than
/// one that trickles. `MultipartBodyReader` never returns more than `packetSize` bytes from one
/// read; whoever sends the bytes waits `delay` between packets (see `MultipartBodyReader`).
public struct BandwidthThrottle: Sendable, Equatable {
    /// AFNetworking's suggested packet size for 3G links (kAFUploadStream3GSuggestedPacketSize):
    /// 16 KiB.
    public static let suggestedPacketSize = 16 * 1024
    /// AFNetworking's suggested delay for 3G links (kAFUploadStream3GSuggestedDelay): 0.2 s.
    public static let suggestedDelay: TimeInterval = 0.2

    /// The most bytes sent before a pause; greater than zero.
    public let packetSize: Int
    /// The pause after each packet, in seconds; zero or more.
    public let delay: TimeInterval

    /// A throttle. `packetSize` must be positive and `delay` zero or more (programming errors
    /// otherwise, so they trap rather than throw).
    public init(packetSize: Int, delay: TimeInterval) {
        precondition(packetSize > 0, "a throttle's packet size must be positive")
        precondition(delay >= 0 && delay.isFinite, "a throttle's delay must be zero or more seconds")
        self.packetSize = packetSize
        self.delay = delay
    }
}
