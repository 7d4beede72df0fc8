import CAres

/// c-ares's statuses in words, for error messages (the mapping to `NetworkingError` lives above
/// Transport and does not import c-ares).
enum DNSStatus {
    /// c-ares's own text for `status` ("DNS server returned answer with no data", ...).
    static func describe(_ status: Int32) -> String {
        guard let text = ares_strerror(status) else { return "c-ares status \(status)" }
        return String(cString: text)
    }
}
