import CAres
import Glibc

/// The sockets of one driver's channel, opened and used through the functions c-ares is given
/// (`ares_set_socket_functions`), so that a TCP connection to a DNS server that fails is seen and
/// remembered (`TCPRefusalMemory`, issue #34). They do what c-ares 1.18 does with its own sockets
/// (non-blocking, close-on-exec, TCP_NODELAY for TCP: it sets none of these on sockets made by
/// such functions; the buffer sizes and local address it would also set come from options this
/// library never gives), plus the bookkeeping.
///
/// Loop-confined: c-ares calls these only from within the driver's calls into it, on the loop.
final class AresSockets {
    private let loop: EventLoop
    /// The TCP sockets c-ares has open -> the server each connects to (nil until it connects).
    private var streams: [ares_socket_t: String?] = [:]
    private var refusals = TCPRefusalMemory()
    /// TCP connections to a server that failed (refused, unreachable) so far, counting the ones
    /// refused at once from memory: a look-up compares it before and after (`RefusedLookUp`).
    private(set) var tcpFailures = 0

    init(loop: EventLoop) {
        self.loop = loop
    }

    /// What c-ares is given as the functions' user data to find this instance; the driver keeps
    /// the instance alive as long as its channel.
    var userData: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    /// Has `channel` use these sockets (on the loop, before any query).
    func install(on channel: OpaquePointer) {
        ares_set_socket_functions(channel, Self.functions, userData)
    }

    /// The errors of a connection that never got made: the ones remembered. An established
    /// connection that breaks later (ECONNRESET) is the server's own business, not a refusal.
    private static func isConnectFailure(_ code: Int32) -> Bool {
        code == ECONNREFUSED || code == EHOSTUNREACH || code == ENETUNREACH
    }

    /// `result` of a call on `socket`, passed on after a failure (negative) was looked at; errno
    /// is kept for c-ares, which reads it.
    private func noting<Result: BinaryInteger>(_ result: Result, of socket: ares_socket_t) -> Result {
        guard result < 0 else { return result }
        let code = errno
        defer { errno = code }
        guard Self.isConnectFailure(code), let server = streams[socket] else { return result }
        tcpFailures += 1
        if let server { refusals.recordRefusal(of: server, now: LoopTimer.now(loop)) }
        return result
    }

    // MARK: The functions

    /// c-ares keeps the pointer for the channel's life: made once, never freed.
    nonisolated(unsafe) private static let functions: UnsafeMutablePointer<ares_socket_functions> = {
        let functions = UnsafeMutablePointer<ares_socket_functions>.allocate(capacity: 1)
        functions.initialize(to: ares_socket_functions(asocket: open, aclose: close, aconnect: connect, arecvfrom: receive, asendv: send))
        return functions
    }()

    private static func from(_ data: UnsafeMutableRawPointer?) -> AresSockets {
        Unmanaged<AresSockets>.fromOpaque(data!).takeUnretainedValue()
    }

    private static let open: @convention(c) (Int32, Int32, Int32, UnsafeMutableRawPointer?) -> ares_socket_t = { domain, type, proto, data in
        let socket = Glibc.socket(domain, type | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), proto)
        guard socket >= 0, type == Int32(SOCK_STREAM.rawValue) else { return socket }  // -1 is ARES_SOCKET_BAD, errno kept
        // DNS over TCP is one small request and its answer: no batching to wait for.
        var on: Int32 = 1
        _ = setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        from(data).streams[socket] = .some(nil)
        return socket
    }

    private static let close: @convention(c) (ares_socket_t, UnsafeMutableRawPointer?) -> Int32 = { socket, data in
        from(data).streams.removeValue(forKey: socket)
        return Glibc.close(socket)
    }

    private static let connect: @convention(c) (ares_socket_t, UnsafePointer<sockaddr>?, ares_socklen_t, UnsafeMutableRawPointer?) -> Int32 = { socket, address, length, data in
        let sockets = from(data)
        guard let address, sockets.streams.keys.contains(socket) else { return Glibc.connect(socket, address, length) }
        let port = Int(UInt16(bigEndian: UnsafeRawPointer(address).load(fromByteOffset: 2, as: UInt16.self)))  // sin_port, sin6_port
        let server = SocketAddress(address, port: port)?.description ?? "?"
        sockets.streams[socket] = .some(server)
        // Refused lately: fail now, which c-ares takes as this query's failure alone.
        if sockets.refusals.isRefused(server, now: LoopTimer.now(sockets.loop)) {
            sockets.tcpFailures += 1
            errno = ECONNREFUSED
            return -1
        }
        return sockets.noting(Glibc.connect(socket, address, length), of: socket)
    }

    private static let receive: @convention(c) (ares_socket_t, UnsafeMutableRawPointer?, Int, Int32, UnsafeMutablePointer<sockaddr>?,
                                                UnsafeMutablePointer<ares_socklen_t>?, UnsafeMutableRawPointer?) -> ares_ssize_t = { socket, buffer, count, flags, peer, peerLength, data in
        from(data).noting(recvfrom(socket, buffer, count, flags, peer, peerLength), of: socket)
    }

    private static let send: @convention(c) (ares_socket_t, UnsafePointer<iovec>?, Int32, UnsafeMutableRawPointer?) -> ares_ssize_t = { socket, vectors, count, data in
        from(data).noting(writev(socket, vectors, count), of: socket)
    }
}
