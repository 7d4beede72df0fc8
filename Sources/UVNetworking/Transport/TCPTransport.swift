import CUV
import Glibc

/// One uv_tcp_t: connect, read, write, close. The thin shell under an HTTP/1.1 connection.
///
/// Loop-confined. The handle keeps the transport alive from `connect` until libuv's close
/// callback, so memory is released only when libuv is done with it. The transport keeps its
/// delegate until it is closed (see `StreamTransport.delegate`).
///
/// Stored properties opt out of runtime exclusivity checks: only the loop thread touches them,
/// and the state machines rule out re-entrant mutation. The checks cost more per request than
/// the work they guard.
final class TCPTransport: StreamTransport {
    typealias WriteOutcome = TransportWriteOutcome

    private let loop: EventLoop
    private let handle: UnsafeMutablePointer<uv_tcp_t>
    @exclusivity(unchecked) var delegate: TransportDelegate?
    @exclusivity(unchecked) private(set) var isClosed = false
    @exclusivity(unchecked) private var isReading = false
    @exclusivity(unchecked) private var writesInFlight = 0

    /// How the socket's packets are marked (`Request.networkServiceType`).
    let serviceType: NetworkServiceType

    init(loop: EventLoop, serviceType: NetworkServiceType = .default) {
        loop.assertInLoop()
        self.loop = loop
        self.serviceType = serviceType
        handle = .allocate(capacity: 1)
        uv_tcp_init(loop.uv, handle)
        handle.pointee.data = Unmanaged.passRetained(self).toOpaque()
    }

    private var stream: UnsafeMutablePointer<uv_stream_t> {
        UnsafeMutableRawPointer(handle).assumingMemoryBound(to: uv_stream_t.self)
    }

    private static func from(_ data: UnsafeMutableRawPointer?) -> TCPTransport {
        Unmanaged<TCPTransport>.fromOpaque(data!).takeUnretainedValue()
    }

    /// Starts connecting, with the socket bound to `interface` when one is given (cellular
    /// routing, `CellularRouting`). The outcome arrives as `transportDidConnect` or
    /// `didFailToConnect`.
    func connect(to address: SocketAddress, interface: String? = nil) {
        loop.assertInLoop()
        let request = UnsafeMutablePointer<uv_connect_t>.allocate(capacity: 1)
        let status = address.withSockAddr { sockaddr in
            // A marked or bound connection is so from its SYN: the socket is made and set up
            // here, then handed to libuv, which would otherwise make it inside uv_tcp_connect.
            if serviceType != .default || interface != nil {
                let opened = Self.openMarkedSocket(family: Int32(sockaddr.pointee.sa_family), serviceType, interface: interface, into: handle)
                guard opened == 0 else { return opened }
            }
            return uv_tcp_connect(request, handle, sockaddr) { request, status in
                let transport = TCPTransport.from(request!.pointee.handle.pointee.data)
                request!.deallocate()
                transport.connectFinished(status)
            }
        }
        if status != 0 {
            request.deallocate()
            // Report asynchronously-equivalent: the caller is prepared for a callback at any time,
            // but not re-entrantly from inside connect(); defer it one loop turn.
            let failure = status
            loop.runAfterIO { [weak self] in
                guard let self, !self.isClosed else { return }
                self.delegate?.transport(self, didFailToConnect: failure)
            }
        }
    }

    /// A marked or bound socket of `family` (`MarkedSocket`) adopted by `handle`; a negative
    /// errno when it cannot be made.
    private static func openMarkedSocket(family: Int32, _ serviceType: NetworkServiceType, interface: String?,
                                         into handle: UnsafeMutablePointer<uv_tcp_t>) -> Int32 {
        let fd = MarkedSocket.open(family: family, serviceType, interface: interface)
        guard fd >= 0 else { return fd }
        let adopted = uv_tcp_open(handle, uv_os_sock_t(fd))
        if adopted != 0 { Glibc.close(fd) }
        return adopted
    }

    private func connectFinished(_ status: Int32) {
        guard !isClosed else { return }
        if status != 0 {
            delegate?.transport(self, didFailToConnect: status)
            return
        }
        // Small requests must not wait for Nagle's algorithm.
        uv_tcp_nodelay(handle, 1)
        delegate?.transportDidConnect(self)
    }

    /// Starts delivering reads (idempotent).
    func startReading() {
        guard !isClosed, !isReading else { return }
        isReading = true
        let status = uv_read_start(stream, { handle, _, buffer in
            let transport = TCPTransport.from(handle!.pointee.data)
            buffer!.pointee.base = transport.loop.readBuffer.baseAddress!.assumingMemoryBound(to: CChar.self)
            buffer!.pointee.len = transport.loop.readBuffer.count
        }, { stream, count, _ in
            TCPTransport.from(stream!.pointee.data).readFinished(count)
        })
        if status != 0 {
            isReading = false
            let failure = status
            loop.runAfterIO { [weak self] in
                guard let self, !self.isClosed else { return }
                self.delegate?.transport(self, didFailWith: failure)
            }
        }
    }

    /// Stops delivering reads: the kernel buffers, then TCP flow control slows the peer.
    func stopReading() {
        guard !isClosed, isReading else { return }
        isReading = false
        uv_read_stop(stream)
    }

    private func readFinished(_ count: Int) {
        guard !isClosed else { return }
        if count > 0 {
            delegate?.transport(self, didRead: UnsafeRawBufferPointer(start: loop.readBuffer.baseAddress, count: count))
        } else if count == Int(UV_EOF.rawValue) {
            stopReading()
            delegate?.transportDidReadEOF(self, cleanly: true)
        } else if count < 0 {
            stopReading()
            delegate?.transport(self, didFailWith: Int32(count))
        }
        // count == 0 is EAGAIN: nothing to do.
    }

    /// Writes `bytes` with one syscall when the socket takes them all (the usual case for a
    /// request), else queues the rest with uv_write.
    func write(_ bytes: UnsafeRawBufferPointer) -> WriteOutcome {
        guard !isClosed else { return .failed(Int32(UV_EPIPE.rawValue)) }
        var offset = 0
        if writesInFlight == 0 {
            var buffer = uv_buf_init(UnsafeMutablePointer(mutating: bytes.baseAddress?.assumingMemoryBound(to: CChar.self)), UInt32(bytes.count))
            let written = uv_try_write(stream, &buffer, 1)
            if written >= 0 {
                offset = Int(written)
                if offset == bytes.count { return .written }
            } else if written != UV_EAGAIN.rawValue {
                return .failed(written)
            }
        }
        let pending = PendingWrite(bytes: UnsafeRawBufferPointer(rebasing: bytes[offset...]), transport: self)
        let status = pending.start(on: stream, count: bytes.count - offset)
        if status != 0 { return .failed(status) }
        writesInFlight += 1
        return .pending
    }

    fileprivate func writeFinished(_ status: Int32) {
        writesInFlight -= 1
        guard !isClosed else { return }
        if status != 0 {
            delegate?.transport(self, didFailWith: status)
        } else {
            delegate?.transportDidFinishWriting(self)
        }
    }

    /// Closes the socket. With `reset`, the peer sees RST instead of FIN (used when a response was
    /// abandoned mid-body, so the server stops sending). No delegate callback runs afterwards.
    func close(reset: Bool) {
        guard !isClosed else { return }
        isClosed = true
        isReading = false
        delegate = nil
        let raw = UnsafeMutableRawPointer(handle).assumingMemoryBound(to: uv_handle_t.self)
        if reset {
            uv_tcp_close_reset(handle) { raw in TCPTransport.closed(raw) }
        } else {
            uv_close(raw) { raw in TCPTransport.closed(raw) }
        }
    }

    private static func closed(_ raw: UnsafeMutablePointer<uv_handle_t>?) {
        let unmanaged = Unmanaged<TCPTransport>.fromOpaque(raw!.pointee.data)
        let transport = unmanaged.takeUnretainedValue()
        transport.handle.deallocate()
        unmanaged.release()
    }
}

/// A uv_write whose bytes must outlive the call; it owns itself and a copy of the bytes until
/// libuv's callback.
private final class PendingWrite {
    let buffer: UnsafeMutableRawBufferPointer
    let transport: TCPTransport
    let request = UnsafeMutablePointer<uv_write_t>.allocate(capacity: 1)

    init(bytes: UnsafeRawBufferPointer, transport: TCPTransport) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 1)
        buffer.copyMemory(from: bytes)
        self.buffer = buffer
        self.transport = transport
    }

    deinit {
        buffer.deallocate()
        request.deallocate()
    }

    func start(on stream: UnsafeMutablePointer<uv_stream_t>, count: Int) -> Int32 {
        request.pointee.data = Unmanaged.passRetained(self).toOpaque()
        var uvBuffer = uv_buf_init(buffer.baseAddress?.assumingMemoryBound(to: CChar.self), UInt32(count))
        let status = uv_write(request, stream, &uvBuffer, 1) { request, status in
            let write = Unmanaged<PendingWrite>.fromOpaque(request!.pointee.data).takeRetainedValue()
            write.transport.writeFinished(status)
        }
        if status != 0 {
            Unmanaged<PendingWrite>.fromOpaque(request.pointee.data).release()
        }
        return status
    }
}
