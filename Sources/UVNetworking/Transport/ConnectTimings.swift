import Foundation

/// When each phase of opening a connection happened, and to which address: what a
/// transaction's metrics report. Kept by the connection for as long as it lives, so compact.
struct ConnectTimings {
    @CompactDate var domainLookupStart: Date? = nil
    @CompactDate var domainLookupEnd: Date? = nil
    @CompactDate var connectStart: Date? = nil
    @CompactDate var connectEnd: Date? = nil
    @CompactDate var secureConnectionStart: Date? = nil
    @CompactDate var secureConnectionEnd: Date? = nil
    var remote: SocketAddress? { didSet { remoteText = nil } }
    /// `remote` as text, made once per connection (`remoteAddressText`): every exchange on the
    /// connection reports the same one (metrics, WARC captures), and formatting it cost more than
    /// the rest of an exchange's metrics together.
    private var remoteText: String?

    /// The remote address as text ("127.0.0.1"), made on first use.
    mutating func remoteAddressText() -> String? {
        if remoteText == nil, let remote { remoteText = remote.ipAddress }
        return remoteText
    }
}
