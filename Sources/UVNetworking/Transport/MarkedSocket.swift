// Foundation as well as Glibc: in a clean build of this module, Glibc alone (and Glibc with
// CUV, whose header includes the socket headers itself) left SOCK_STREAM, SOCK_NONBLOCK and
// SOCK_CLOEXEC out of scope, while an incremental build found them.
import Foundation
import Glibc

/// A TCP socket whose packets are marked for a `NetworkServiceType` (`TCPTransport` hands it
/// to libuv before connecting, so the SYN is marked too).
enum MarkedSocket {
    /// A non-blocking, close-on-exec stream socket of `family` whose packets carry
    /// `serviceType`'s DSCP (IP_TOS or IPV6_TCLASS: the code point in the byte's upper six bits)
    /// and whose priority is its socket priority; a negative errno when it cannot be made. A
    /// mark the system refuses is skipped: the socket is still usable.
    static func open(family: Int32, _ serviceType: NetworkServiceType) -> Int32 {
        let fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
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
