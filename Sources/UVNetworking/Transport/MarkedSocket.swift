import Glibc

/// A TCP socket whose packets are marked for a `NetworkServiceType` (`TCPTransport` hands it
/// to libuv before connecting, so the SYN is marked too).
enum MarkedSocket {
    /// SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, by their values in Linux's ABI (1, 0o4000,
    /// 0o2000000 on x86-64 and arm64): in a clean build of this module Swift did not find the
    /// three names in this file, whatever it imported (an incremental build did), so they are
    /// not named.
    static let streamType: Int32 = 1 | 0o4000 | 0o2000000

    /// A non-blocking, close-on-exec stream socket of `family` whose packets carry
    /// `serviceType`'s DSCP (IP_TOS or IPV6_TCLASS: the code point in the byte's upper six bits)
    /// and whose priority is its socket priority; a negative errno when it cannot be made. A
    /// mark the system refuses is skipped: the socket is still usable.
    static func open(family: Int32, _ serviceType: NetworkServiceType) -> Int32 {
        let fd = socket(family, streamType, 0)
        guard fd >= 0 else { return -errno }
        var traffic = Int32(serviceType.dscp) << 2
        if family == AF_INET6 {
            _ = setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_TCLASS, &traffic, socklen_t(MemoryLayout<Int32>.size))
        } else {
            _ = setsockopt(fd, Int32(IPPROTO_IP), IP_TOS, &traffic, socklen_t(MemoryLayout<Int32>.size))
        }
        // After IP_TOS, which sets a priority of its own from the TOS byte.
        var priority = serviceType.socketPriority
        _ = setsockopt(fd, SOL_SOCKET, SO_PRIORITY, &priority, socklen_t(MemoryLayout<Int32>.size))
        return fd
    }
}
