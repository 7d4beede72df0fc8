import CUV

/// One accepted connection: reads requests, writes the answers to each read in one write, and
/// closes gracefully.
///
/// Loop-confined. The handle's `data` holds a retained reference from `init` until libuv's
/// close callback, so the object lives exactly as long as libuv may call into it.
///
/// Closing: after the last response (a request that closes, or a refusal) is written, the
/// connection shuts down its sending side and reads and drops what the client still sends until
/// it closes too. Closing at once could make the kernel answer the client's unread bytes with a
/// reset, which can destroy the response before the client reads it. There is no timer: a client
/// that never closes keeps its (idle) connection until `stop()`.
final class ServerConnection {
    /// Where the connection is in its life.
    private enum Phase {
        /// Reading requests and answering them.
        case serving
        /// The last response is queued: shut down once it is written.
        case finishing
        /// The client sent EOF: close once the queued responses are written.
        case draining
        /// Shut down; dropping what the client still sends until its EOF.
        case lingering
        /// uv_close was called.
        case closed
    }

    /// At most this many bytes are dropped while lingering before the connection is closed anyway.
    private static let lingerLimit = 64 * 1024

    private let loop: ServerLoop
    private let handle: UnsafeMutablePointer<uv_tcp_t>
    private let requests: RequestResponder
    @exclusivity(unchecked) private var phase = Phase.serving
    @exclusivity(unchecked) private var isReading = false
    @exclusivity(unchecked) private var writesInFlight = 0
    @exclusivity(unchecked) private var lingeredBytes = 0

    /// Creates the connection's handle on `loop`, ready for uv_accept.
    init(loop: ServerLoop) {
        loop.assertInLoop()
        self.loop = loop
        requests = RequestResponder(output: loop.output)
        handle = .allocate(capacity: 1)
        uv_tcp_init(loop.uv, handle)
        handle.pointee.data = Unmanaged.passRetained(self).toOpaque()
    }

    /// The handle as a stream.
    var stream: UnsafeMutablePointer<uv_stream_t> {
        UnsafeMutableRawPointer(handle).assumingMemoryBound(to: uv_stream_t.self)
    }

    static func from(_ data: UnsafeMutableRawPointer?) -> ServerConnection {
        Unmanaged<ServerConnection>.fromOpaque(data!).takeUnretainedValue()
    }

    /// Starts serving an accepted connection.
    func start() {
        // Responses are written whole; Nagle's algorithm would only hold the last piece back.
        uv_tcp_nodelay(handle, 1)
        startReading()
    }

    // MARK: - Reading

    private func startReading() {
        guard !isReading, phase != .closed else { return }
        let status = uv_read_start(stream, { handle, _, buffer in
            let loop = ServerLoop.from(handle!.pointee.loop)
            buffer!.pointee.base = loop.readBuffer.baseAddress!.assumingMemoryBound(to: CChar.self)
            buffer!.pointee.len = loop.readBuffer.count
        }, { stream, count, _ in
            ServerConnection.from(stream!.pointee.data).didRead(count)
        })
        if status == 0 { isReading = true } else { close() }
    }

    private func stopReading() {
        guard isReading else { return }
        isReading = false
        uv_read_stop(stream)
    }

    private func didRead(_ count: Int) {
        loop.assertInLoop()
        if count > 0 {
            switch phase {
            case .serving:
                let outcome = requests.feed(UnsafeRawBufferPointer(start: loop.readBuffer.baseAddress, count: count))
                flush()
                if outcome == .close && phase == .serving {
                    phase = .finishing
                    stopReading()
                    if writesInFlight == 0 { shutDown() }
                }
            case .lingering:
                lingeredBytes += count
                if lingeredBytes > Self.lingerLimit { close() }
            case .finishing, .draining, .closed:
                break
            }
        } else if count == Int(UV_EOF.rawValue) {
            stopReading()
            if phase == .serving && writesInFlight > 0 {
                phase = .draining
            } else if phase != .finishing {
                close()
            }
        } else if count < 0 {
            close()
        }
        // count == 0 is EAGAIN: nothing to do.
    }

    // MARK: - Writing

    /// Hands the loop's output to the socket: one uv_try_write, and a uv_write of a copy of
    /// whatever it did not take. Reading stops until that write completes, which bounds what a
    /// client that does not read its responses can make the server hold to one read's worth.
    private func flush() {
        let output = loop.output
        defer { output.removeAll() }
        guard output.count > 0, phase != .closed else { return }
        var offset = 0
        if writesInFlight == 0 {
            var buffer = uv_buf_init(UnsafeMutableRawPointer(output.base).assumingMemoryBound(to: CChar.self), UInt32(output.count))
            let written = uv_try_write(stream, &buffer, 1)
            if written == output.count { return }
            if written < 0 && written != UV_EAGAIN.rawValue {
                close()
                return
            }
            offset = max(Int(written), 0)
        }
        let pending = PendingWrite(UnsafeRawBufferPointer(rebasing: output.bytes[offset...]), connection: self)
        guard pending.start(on: stream) == 0 else {
            close()
            return
        }
        writesInFlight += 1
        stopReading()
    }

    fileprivate func didWrite(_ status: Int32) {
        writesInFlight -= 1
        guard phase != .closed else { return }
        guard status == 0 else {
            close()
            return
        }
        guard writesInFlight == 0 else { return }
        switch phase {
        case .serving: startReading()
        case .finishing: shutDown()
        case .draining: close()
        case .lingering, .closed: break
        }
    }

    // MARK: - Closing

    /// Sends FIN after the last response, then lingers (see the type's comment).
    private func shutDown() {
        phase = .lingering
        let request = UnsafeMutablePointer<uv_shutdown_t>.allocate(capacity: 1)
        let status = uv_shutdown(request, stream) { request, status in
            let connection = ServerConnection.from(request!.pointee.handle.pointee.data)
            request!.deallocate()
            if status != 0 { connection.close() }
        }
        guard status == 0 else {
            request.deallocate()
            close()
            return
        }
        startReading()
    }

    /// Closes the socket; in-flight writes and a shutdown complete with UV_ECANCELED first.
    func close() {
        loop.assertInLoop()
        guard phase != .closed else { return }
        phase = .closed
        isReading = false
        uv_close(UnsafeMutableRawPointer(handle).assumingMemoryBound(to: uv_handle_t.self)) { handle in
            let unmanaged = Unmanaged<ServerConnection>.fromOpaque(handle!.pointee.data!)
            unmanaged.takeUnretainedValue().handle.deallocate()
            unmanaged.release()
        }
    }
}

/// A uv_write of bytes the socket did not take at once; it owns a copy of them and itself until
/// libuv's callback.
private final class PendingWrite {
    private let buffer: UnsafeMutableRawBufferPointer
    private let connection: ServerConnection
    private let request = UnsafeMutablePointer<uv_write_t>.allocate(capacity: 1)

    init(_ bytes: UnsafeRawBufferPointer, connection: ServerConnection) {
        buffer = .allocate(byteCount: max(bytes.count, 1), alignment: 1)
        buffer.copyMemory(from: bytes)
        self.connection = connection
    }

    deinit {
        buffer.deallocate()
        request.deallocate()
    }

    /// Starts the write; on success the object lives until the callback.
    func start(on stream: UnsafeMutablePointer<uv_stream_t>) -> Int32 {
        request.pointee.data = Unmanaged.passRetained(self).toOpaque()
        var uvBuffer = uv_buf_init(buffer.baseAddress?.assumingMemoryBound(to: CChar.self), UInt32(buffer.count))
        let status = uv_write(request, stream, &uvBuffer, 1) { request, status in
            let write = Unmanaged<PendingWrite>.fromOpaque(request!.pointee.data).takeRetainedValue()
            write.connection.didWrite(status)
        }
        if status != 0 { Unmanaged<PendingWrite>.fromOpaque(request.pointee.data).release() }
        return status
    }
}
