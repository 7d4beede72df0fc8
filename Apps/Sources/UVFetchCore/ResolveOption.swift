/// One `--resolve host:port:addr[,addr]...` (curl's syntax): the addresses `host` is connected
/// at. The session's overrides hold for every port, so PORT is checked (a number or `*`) and
/// otherwise not used. Addresses are IPv4 or IPv6 literals, IPv6 with or without brackets;
/// that they are literals is checked when a request resolves the host (`dnsFailure`).
struct ResolveOption: Equatable {
    var host: String
    /// As given after the port: `SessionConfiguration.hostAddressOverrides`' format.
    var addresses: String

    init?(_ text: String) {
        let parts = text.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[2].isEmpty,
              parts[1] == "*" || UInt16(parts[1]) != nil else { return nil }
        host = String(parts[0])
        addresses = String(parts[2])
    }
}
