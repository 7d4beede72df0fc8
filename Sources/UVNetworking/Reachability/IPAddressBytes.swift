import Glibc

/// An IP address as rtnetlink carries it: the family and the address's bytes in network order.
struct IPAddressBytes: Equatable, Hashable {
    var family: UInt8
    var bytes: [UInt8]

    init(family: UInt8, bytes: [UInt8]) {
        self.family = family
        self.bytes = bytes
    }

    /// The address of a socket address (its port is ignored). An IPv4-mapped IPv6 address
    /// (::ffff:a.b.c.d) is its IPv4 address: a dual-stack socket sends to it over IPv4.
    init(_ address: SocketAddress) {
        if address.isIPv6 {
            let raw = address.withSockAddr { pointer in
                pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { withUnsafeBytes(of: $0.pointee.sin6_addr) { Array($0) } }
            }
            if raw[0..<10].allSatisfy({ $0 == 0 }), raw[10] == 0xFF, raw[11] == 0xFF {
                family = Netlink.Family.inet
                bytes = Array(raw[12...])
            } else {
                family = Netlink.Family.inet6
                bytes = raw
            }
        } else {
            family = Netlink.Family.inet
            bytes = address.withSockAddr { pointer in
                pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { withUnsafeBytes(of: $0.pointee.sin_addr) { Array($0) } }
            }
        }
    }

    /// fe80::/10 or 169.254.0.0/16. Such a source reaches only its own link: IPv6 never routes
    /// it (RFC 4291), and routers must not forward IPv4 packets from 169.254/16 (RFC 3927 §7).
    /// Linux would still pick a 169.254 source for an on-link global destination; that rare
    /// case is given up so that an interface with only a self-assigned address (no DHCP answer)
    /// does not count as a way out.
    var isLinkLocal: Bool {
        family == Netlink.Family.inet6 ? hasPrefix([0xFE, 0x80], length: 10) : hasPrefix([169, 254], length: 16)
    }

    /// Whether the first `length` bits equal `prefix`'s (an empty prefix of length 0 matches all).
    func hasPrefix(_ prefix: [UInt8], length: UInt8) -> Bool {
        var bits = Int(length)
        guard bits <= bytes.count * 8, prefix.count * 8 >= bits else { return false }
        var index = 0
        while bits >= 8 {
            if bytes[index] != prefix[index] { return false }
            index += 1
            bits -= 8
        }
        guard bits > 0 else { return true }
        let mask = UInt8(0xFF) << (8 - bits)
        return bytes[index] & mask == prefix[index] & mask
    }
}
