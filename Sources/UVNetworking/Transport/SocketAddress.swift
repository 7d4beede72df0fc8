import CUV
import Glibc

/// An IPv4 or IPv6 socket address, stored by value so it can cross threads and sit in caches.
struct SocketAddress: Sendable, Equatable, CustomStringConvertible {
    /// Room for either family (sockaddr_in fits in sockaddr_in6): 28 bytes, not
    /// sockaddr_storage's 128, since every connection keeps one for its metrics.
    private var storage = sockaddr_in6()

    /// Parses a numeric host ("127.0.0.1", "::1", without brackets). Nil for a name to resolve.
    init?(numericHost host: String, port: Int) {
        var v4 = sockaddr_in()
        if uv_ip4_addr(host, Int32(port), &v4) == 0 {
            Self.copy(v4, into: &storage)
            return
        }
        var v6 = sockaddr_in6()
        if host.contains(":"), uv_ip6_addr(host, Int32(port), &v6) == 0 {
            Self.copy(v6, into: &storage)
            return
        }
        return nil
    }

    /// Copies an address returned by getaddrinfo, with the port set.
    init?(_ address: UnsafePointer<sockaddr>, port: Int) {
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            var v4 = UnsafeRawPointer(address).load(as: sockaddr_in.self)
            v4.sin_port = UInt16(port).bigEndian
            Self.copy(v4, into: &storage)
        case AF_INET6:
            var v6 = UnsafeRawPointer(address).load(as: sockaddr_in6.self)
            v6.sin6_port = UInt16(port).bigEndian
            Self.copy(v6, into: &storage)
        default:
            return nil
        }
    }

    private static func copy<T>(_ value: T, into storage: inout sockaddr_in6) {
        withUnsafeBytes(of: value) { source in
            withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: source) }
        }
    }

    var isIPv6: Bool { Int32(storage.sin6_family) == AF_INET6 }

    /// Calls `body` with a pointer libuv can take as `const struct sockaddr *`.
    func withSockAddr<R>(_ body: (UnsafePointer<sockaddr>) -> R) -> R {
        withUnsafeBytes(of: storage) { body($0.baseAddress!.assumingMemoryBound(to: sockaddr.self)) }
    }

    /// The address alone: "127.0.0.1" or "::1".
    var ipAddress: String {
        var text = [CChar](repeating: 0, count: 64)
        withSockAddr { address in
            if isIPv6 {
                _ = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { uv_ip6_name($0, &text, text.count) }
            } else {
                _ = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { uv_ip4_name($0, &text, text.count) }
            }
        }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    var port: Int {
        withSockAddr { address in
            isIPv6 ? Int(address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) })
                : Int(address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) })
        }
    }

    /// "127.0.0.1:80" or "[::1]:80".
    var description: String {
        isIPv6 ? "[\(ipAddress)]:\(port)" : "\(ipAddress):\(port)"
    }

    static func == (lhs: SocketAddress, rhs: SocketAddress) -> Bool { lhs.description == rhs.description }
}
