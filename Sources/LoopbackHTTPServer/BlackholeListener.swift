import Glibc

/// A loopback listener that never accepts, with its accept queue already full: a connect to it
/// gets no answer, the way a blackholed host behaves, without leaving loopback. For tests of
/// connect timeouts and Happy Eyeballs, in the test process or in a probe's namespace.
public final class BlackholeListener {
    /// The port it listens on.
    public let port: Int
    private let listener: Int32
    private var fillers: [Int32] = []

    /// Listens on 127.0.0.1 (or ::1 with `ipv6`, IPv6 only, so an IPv4 server may share the
    /// port) on an ephemeral port or `port`, and fills the queue.
    /// - Throws: `LoopbackHTTPServerError` when the socket cannot be bound or listened on.
    public init(ipv6: Bool = false, port: Int = 0) throws(LoopbackHTTPServerError) {
        let family = ipv6 ? AF_INET6 : AF_INET
        let fd = socket(family, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw LoopbackHTTPServerError(operation: "socket", code: -errno) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        if ipv6 { setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size)) }
        let bound = Self.withLoopbackAddress(ipv6: ipv6, port: port) { bind(fd, $0, $1) }
        guard bound == 0, Glibc.listen(fd, 0) == 0 else {
            let code = errno
            Glibc.close(fd)
            throw LoopbackHTTPServerError(operation: "listen on \(ipv6 ? "[::1]" : "127.0.0.1"):\(port)", code: -code)
        }
        listener = fd
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        // sin_port and sin6_port both follow the 2-byte family, in network order.
        self.port = withUnsafeBytes(of: storage) { Int(UInt16($0[2]) << 8 | UInt16($0[3])) }
        // Linux queues backlog + 1 connections; later SYNs are dropped, so connects hang. A
        // filler that does not connect within 0.2 s found the queue full already.
        for _ in 0..<4 {
            let filler = socket(family, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue | SOCK_NONBLOCK.rawValue), 0)
            guard filler >= 0 else { continue }
            let started = Self.withLoopbackAddress(ipv6: ipv6, port: self.port) { Glibc.connect(filler, $0, $1) == 0 ? 0 : errno }
            var poller = pollfd(fd: filler, events: Int16(POLLOUT), revents: 0)
            var error: Int32 = 0
            var size = socklen_t(MemoryLayout<Int32>.size)
            if started == 0 || (started == EINPROGRESS && poll(&poller, 1, 200) == 1
                                && getsockopt(filler, SOL_SOCKET, SO_ERROR, &error, &size) == 0 && error == 0) {
                fillers.append(filler)
            } else {
                Glibc.close(filler)
            }
        }
    }

    /// Closes the fillers and the listener.
    public func close() {
        for fd in fillers { Glibc.close(fd) }
        fillers.removeAll()
        Glibc.close(listener)
    }

    private static func withLoopbackAddress<R>(ipv6: Bool, port: Int, _ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        if ipv6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = in_port_t(UInt16(port).bigEndian)
            address.sin6_addr = in6addr_loopback
            return withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in6>.size)) } }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
    }
}
