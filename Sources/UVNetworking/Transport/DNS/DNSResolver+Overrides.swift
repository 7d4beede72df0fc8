extension DNSResolver {
    /// The answer for a host named in `SessionConfiguration.hostAddressOverrides`: its IP
    /// literals, comma-separated as in curl's `--resolve host:port:addr[,addr]...` (spaces
    /// around them allowed, IPv6 with or without brackets), in the order given. Any entry that is
    /// not an IP literal fails the look-up.
    static func overrideAddresses(host: String, address: String, port: Int) -> Result<[SocketAddress], TransportError> {
        var addresses: [SocketAddress] = []
        for entry in address.split(separator: ",", omittingEmptySubsequences: false) {
            var literal = String(entry.filter { $0 != " " })
            if literal.hasPrefix("[") && literal.hasSuffix("]") { literal = String(literal.dropFirst().dropLast()) }
            guard let numeric = SocketAddress(numericHost: literal, port: port) else {
                return .failure(.overrideNotIPLiteral(host: host, address: address))
            }
            if !addresses.contains(numeric) { addresses.append(numeric) }
        }
        return .success(addresses)
    }
}
