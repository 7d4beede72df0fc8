import Glibc

/// `SessionConfiguration.dnsServers` in curl's `--dns-servers` syntax ("127.0.0.1",
/// "127.0.0.1:5353", "[::1]:53", "::1"), turned into the list c-ares takes
/// (`ares_set_servers_ports_csv`). Checked here, entry by entry, so that a bad entry is named in
/// the error rather than lost in c-ares's one status for the whole list.
enum DNSServerList {
    /// The comma-separated list for c-ares, or the first entry that is not an IP address with an
    /// optional port (1...65535).
    static func csv(_ entries: [String]) -> Result<String, TransportError> {
        var parts: [String] = []
        for raw in entries {
            let entry = raw.trimmingSpaces
            guard let part = parse(entry) else { return .failure(.invalidDNSServer(entry: raw)) }
            parts.append(part)
        }
        return .success(parts.joined(separator: ","))
    }

    /// One entry in c-ares's form ("a.b.c.d:port", "[v6]:port"), nil when it is not valid.
    static func parse(_ entry: String) -> String? {
        var host = Substring(entry)
        var port: Substring?
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return nil }
            let rest = host[host.index(after: close)...]
            host = host[host.index(after: host.startIndex)..<close]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { return nil }
                port = rest.dropFirst()
            }
            guard isIPv6(host) else { return nil }
        } else if host.filter({ $0 == ":" }).count == 1 {
            let colon = host.firstIndex(of: ":")!
            port = host[host.index(after: colon)...]
            host = host[..<colon]
            guard isIPv4(host) else { return nil }
        } else if host.contains(":") {
            guard isIPv6(host) else { return nil }
        } else {
            guard isIPv4(host) else { return nil }
        }
        var portNumber = 53
        if let port {
            guard !port.isEmpty, port.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int(port), (1...65535).contains(value)
            else { return nil }
            portNumber = value
        }
        return host.contains(":") ? "[\(host)]:\(portNumber)" : "\(host):\(portNumber)"
    }

    private static func isIPv4(_ text: Substring) -> Bool {
        var address = in_addr()
        return inet_pton(AF_INET, String(text), &address) == 1
    }

    private static func isIPv6(_ text: Substring) -> Bool {
        var address = in6_addr()
        return inet_pton(AF_INET6, String(text), &address) == 1
    }
}

private extension String {
    var trimmingSpaces: String {
        String(drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed())
    }
}
