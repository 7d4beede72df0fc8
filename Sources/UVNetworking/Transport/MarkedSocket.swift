import Glibc

/// A TCP socket whose packets are marked for a `NetworkServiceType`, or bound to one interface
/// (`Request.allowsCellularAccess`), or both: `TCPTransport` hands it to libuv before
/// connecting, so the SYN is marked and routed that way too.
enum MarkedSocket {
    /// SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, by their values in Linux's ABI (1, 0o4000,
    /// 0o2000000 on x86-64 and arm64): in a clean build of this module Swift did not find the
    /// three names in this file, whatever it imported (an incremental build did), so they are
    /// not named.
    static let streamType: Int32 = 1 | 0o4000 | 0o2000000
    /// SOCK_DGRAM | SOCK_CLOEXEC, the same way.
    static let datagramType: Int32 = 2 | 0o2000000

    /// A non-blocking, close-on-exec stream socket of `family`; a negative errno when it cannot
    /// be made. Unless `serviceType` is `.default`, its packets carry the type's DSCP (IP_TOS or
    /// IPV6_TCLASS: the code point in the byte's upper six bits) and its priority is the type's
    /// socket priority (a mark the system refuses is skipped: the socket is still usable). With
    /// an `interface`, it is bound to it (SO_BINDTODEVICE): failing that fails the socket.
    static func open(family: Int32, _ serviceType: NetworkServiceType, interface: String? = nil) -> Int32 {
        let fd = socket(family, streamType, 0)
        guard fd >= 0 else { return -errno }
        if serviceType != .default {
            var traffic = Int32(serviceType.dscp) << 2
            if family == AF_INET6 {
                _ = setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_TCLASS, &traffic, socklen_t(MemoryLayout<Int32>.size))
            } else {
                _ = setsockopt(fd, Int32(IPPROTO_IP), IP_TOS, &traffic, socklen_t(MemoryLayout<Int32>.size))
            }
            // After IP_TOS, which sets a priority of its own from the TOS byte.
            var priority = serviceType.socketPriority
            _ = setsockopt(fd, SOL_SOCKET, SO_PRIORITY, &priority, socklen_t(MemoryLayout<Int32>.size))
        }
        if let interface {
            let bound = bind(fd, to: interface)
            guard bound == 0 else {
                Glibc.close(fd)
                return bound
            }
        }
        return fd
    }

    /// Whether a socket of `family` may be bound to `interface` here: the kernel allows it
    /// without privilege since Linux 5.7, before only with CAP_NET_RAW. 0, or a negative errno.
    /// Makes and closes a datagram socket (no packet is sent).
    static func checkBinding(family: Int32, to interface: String) -> Int32 {
        let fd = socket(family, datagramType, 0)
        guard fd >= 0 else { return -errno }
        defer { Glibc.close(fd) }
        return bind(fd, to: interface)
    }

    /// SO_BINDTODEVICE: 0, or a negative errno.
    private static func bind(_ fd: Int32, to interface: String) -> Int32 {
        let name = Array(interface.utf8) + [0]
        let status = name.withUnsafeBytes { raw in
            setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, raw.baseAddress, socklen_t(raw.count))
        }
        return status == 0 ? 0 : -errno
    }
}
