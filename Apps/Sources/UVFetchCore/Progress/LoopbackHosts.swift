#if canImport(Glibc)
import Glibc
#endif

/// Which hosts a run reaches without the network: 127.0.0.0/8, ::1 and `localhost`, and names
/// that `--resolve` sends only to such addresses. A run whose hosts are all loopback never says
/// "network unreachable": `uvfetch demo` on a machine with no default route fetches fine.
///
/// Hosts are read as the library reads them: IPv4 literals as inet_aton does (so `127.1` is
/// loopback, as it is connected to), IPv6 literals with or without a zone, overrides by their
/// lowercased name. Asked once per URL until the first host that is not loopback, so `contains`
/// allocates nothing for a loopback host (URL hosts of up to 15 bytes are small strings).
struct LoopbackHosts: Sendable {
    /// `--resolve`'s names (lowercased), each with whether all its addresses are loopback: an
    /// override decides for its name before the `localhost` rule, as in the library's resolver.
    private let overrides: [(name: String, isLoopback: Bool)]

    /// `overrides` in `SessionConfiguration.hostAddressOverrides`' form: host name to
    /// comma-separated IP literals, IPv6 with or without brackets.
    init(overrides: [String: String] = [:]) {
        self.overrides = overrides.map { name, addresses in
            // Parsed as the resolver parses them: spaces dropped, brackets optional; an entry that
            // is no literal fails the name's look-up, so the name is not loopback.
            let literals = addresses.split(separator: ",", omittingEmptySubsequences: false).map { entry in
                let literal = String(entry.filter { $0 != " " })
                return literal.hasPrefix("[") && literal.hasSuffix("]") ? String(literal.dropFirst().dropLast()) : literal
            }
            return (name.lowercased(), literals.allSatisfy(Self.isLoopbackLiteral))
        }
    }

    /// Whether connecting to `host` (a URL's host: IPv6 without brackets) stays on this machine.
    func contains(_ host: String) -> Bool {
        if let literal = Self.literalIsLoopback(host) { return literal }
        for override in overrides where Self.equalsIgnoringASCIICase(host, override.name) {
            return override.isLoopback
        }
        return Self.equalsIgnoringASCIICase(host, "localhost") || Self.equalsIgnoringASCIICase(host, "localhost.")
    }

    /// Whether `text` is an IP literal of a loopback address.
    static func isLoopbackLiteral(_ text: String) -> Bool {
        literalIsLoopback(text) ?? false
    }

    /// For an IP literal, whether it is loopback; nil for anything else (a name).
    private static func literalIsLoopback(_ host: String) -> Bool? {
        guard let first = host.utf8.first else { return nil }
        if host.utf8.contains(UInt8(ascii: ":")) { return ipv6IsLoopback(host) }
        guard first >= UInt8(ascii: "0"), first <= UInt8(ascii: "9"),
              host.utf8.allSatisfy({ $0 == UInt8(ascii: ".") || isxdigit(Int32($0)) != 0 || $0 | 0x20 == UInt8(ascii: "x") })
        else { return nil }
        // inet_aton's forms (127.1, 0x7f.1, 2130706433), as the library's resolver accepts them.
        // withCString: the implicit String-to-pointer conversion allocated twice per call.
        var address = in_addr()
        guard host.withCString({ inet_aton($0, &address) }) != 0 else { return nil }
        return UInt32(bigEndian: address.s_addr) >> 24 == 127
    }

    /// ::1, or an IPv4-mapped 127.0.0.0/8 address; nil when `host` is no IPv6 literal. A zone
    /// (`::1%lo`) is ignored, as libuv ignores it for loopback.
    private static func ipv6IsLoopback(_ host: String) -> Bool? {
        var address = in6_addr()
        let parsed: Int32
        if let zone = host.utf8.firstIndex(of: UInt8(ascii: "%")) {
            parsed = String(host[..<zone]).withCString { inet_pton(AF_INET6, $0, &address) }
        } else {
            parsed = host.withCString { inet_pton(AF_INET6, $0, &address) }
        }
        guard parsed == 1 else { return nil }
        return withUnsafeBytes(of: &address) { bytes in
            let isLoopback = bytes.prefix(15).allSatisfy { $0 == 0 } && bytes[15] == 1
            let isMappedLoopback = bytes.prefix(10).allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF && bytes[12] == 127
            return isLoopback || isMappedLoopback
        }
    }

    /// ASCII case-insensitive equality, byte by byte: no lowercased copy per URL.
    private static func equalsIgnoringASCIICase(_ text: String, _ lowercased: String) -> Bool {
        guard text.utf8.count == lowercased.utf8.count else { return false }
        return zip(text.utf8, lowercased.utf8).allSatisfy { byte, lower in
            byte == lower || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") && byte | 0x20 == lower)
        }
    }
}
