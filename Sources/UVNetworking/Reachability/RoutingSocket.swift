import Glibc

/// The system calls of one rtnetlink socket: opened non-blocking, subscribed to the kernel's
/// link, address and route changes, read and written a datagram at a time. No state of its own
/// beyond the descriptor; `ReachabilityShell` polls it on the loop and owns its lifetime.
struct RoutingSocket {
    /// What a read gave.
    enum Received {
        /// One whole datagram, from the kernel.
        case datagram(Int)
        /// Nothing more to read now (EAGAIN).
        case drained
        /// The kernel dropped messages (ENOBUFS), or a datagram did not fit the buffer: what we
        /// know of the network may be stale.
        case overrun
        /// A datagram not from the kernel (another process's): ignored.
        case foreign
        /// The socket failed.
        case failed(NetworkReachabilityError)
    }

    let descriptor: Int32

    // linux/netlink.h and linux/rtnetlink.h: the numbers this socket needs.
    private static let netlinkRoute: Int32 = 0
    /// RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_IFADDR | RTMGRP_IPV6_ROUTE.
    static let groups: UInt32 = 0x1 | 0x10 | 0x40 | 0x100 | 0x400
    /// The receive buffer asked for: a burst of changes (a link going down takes its addresses
    /// and routes with it) or a full dump of a host with many routes fits without ENOBUFS.
    static let receiveBufferBytes: Int32 = 1 << 20
    /// sizeof(struct sockaddr_nl): family u16, pad u16, pid u32, groups u32.
    private static let addressSize = 12

    /// Opens and binds the socket, subscribed to `groups` (none: a socket for dumps alone).
    /// Fails with the call and errno (EMFILE, EPERM, ENOBUFS...).
    static func open(groups: UInt32 = RoutingSocket.groups) -> Result<RoutingSocket, NetworkReachabilityError> {
        let type = Int32(SOCK_RAW.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let descriptor = socket(AF_NETLINK, type, netlinkRoute)
        guard descriptor >= 0 else { return .failure(.systemCall("socket", errno: errno)) }
        // A bigger buffer: FORCE goes past rmem_max where the process may (CAP_NET_ADMIN); else
        // the plain option, which the kernel caps at rmem_max. Neither failing is fatal: an
        // overrun is handled by dumping again.
        let forced = ReachabilityTesting.receiveBufferBytes.load(ordering: .relaxed)
        var size = forced > 0 ? forced : receiveBufferBytes
        let length = socklen_t(MemoryLayout<Int32>.size)
        if setsockopt(descriptor, SOL_SOCKET, SO_RCVBUFFORCE, &size, length) != 0 {
            _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, length)
        }
        var address = makeAddress(groups: groups)
        let bound = address.withUnsafeMutableBytes { raw in
            bind(descriptor, raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(addressSize))
        }
        guard bound == 0 else {
            let error = errno
            _ = Glibc.close(descriptor)
            return .failure(.systemCall("bind", errno: error))
        }
        return .success(RoutingSocket(descriptor: descriptor))
    }

    /// A sockaddr_nl: the kernel (pid 0) when `groups` is 0, else our subscription.
    private static func makeAddress(groups: UInt32) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: addressSize)
        bytes.withUnsafeMutableBytes { raw in
            raw.storeBytes(of: UInt16(AF_NETLINK), toByteOffset: 0, as: UInt16.self)
            raw.storeBytes(of: UInt32(0), toByteOffset: 4, as: UInt32.self)
            raw.storeBytes(of: groups, toByteOffset: 8, as: UInt32.self)
        }
        return bytes
    }

    /// Reads one datagram into `buffer`.
    func receive(into buffer: UnsafeMutableRawBufferPointer) -> Received {
        var sender = [UInt8](repeating: 0, count: Self.addressSize)
        while true {
            var senderLength = socklen_t(Self.addressSize)
            // MSG_TRUNC: the datagram's real length, so one larger than the buffer is noticed.
            let count = sender.withUnsafeMutableBytes { raw in
                recvfrom(descriptor, buffer.baseAddress, buffer.count, Int32(MSG_TRUNC) | Int32(MSG_DONTWAIT),
                         raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), &senderLength)
            }
            if count < 0 {
                switch errno {
                case EINTR: continue
                case EAGAIN, EWOULDBLOCK: return .drained
                case ENOBUFS: return .overrun
                case let error: return .failed(.systemCall("recvfrom", errno: error))
                }
            }
            if count > buffer.count { return .overrun }
            // Only the kernel (port id 0) speaks for the network.
            let senderPort = sender.withUnsafeBytes { $0.load(fromByteOffset: 4, as: UInt32.self) }
            if senderPort != 0 { return .foreign }
            return .datagram(count)
        }
    }

    /// Sends `bytes` (a request) to the kernel.
    func send(_ bytes: [UInt8]) -> NetworkReachabilityError? {
        let kernel = Self.makeAddress(groups: 0)
        while true {
            let sent = bytes.withUnsafeBytes { message in
                kernel.withUnsafeBytes { address in
                    sendto(descriptor, message.baseAddress, message.count, Int32(MSG_DONTWAIT),
                           address.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(Self.addressSize))
                }
            }
            if sent >= 0 { return nil }
            if errno == EINTR { continue }
            return .systemCall("sendto", errno: errno)
        }
    }

    /// Closes the descriptor (after its poll handle was closed: libuv must stop watching it first).
    func close() {
        _ = Glibc.close(descriptor)
    }
}
