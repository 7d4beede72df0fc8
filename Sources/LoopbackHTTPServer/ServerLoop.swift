import CUV
import Dispatch
import Glibc
import Synchronization

/// The server's libuv loop on its thread: the listener, the stop signal and the buffers every
/// connection shares.
///
/// Thread rules: everything here is created, used and freed on the loop thread, except `port`
/// (written before `start` returns, read-only afterwards), `stopSignal` (uv_async_send is the
/// one libuv call that is safe from any thread) and `thread` (only the owner joins it).
final class ServerLoop: @unchecked Sendable {
    /// The bound port, known once `start` returns.
    private(set) var port = 0

    let uv: UnsafeMutablePointer<uv_loop_t>
    private let listener: UnsafeMutablePointer<uv_tcp_t>
    private let stopSignal: UnsafeMutablePointer<uv_async_t>
    private var thread: ServerThread?
    /// The loop thread's id, set as it starts; for `assertInLoop`.
    private var loopThreadID: pthread_t?

    /// One read buffer for every connection: a read callback consumes its bytes before it
    /// returns, so the next read on any connection can reuse it.
    let readBuffer: UnsafeMutableRawBufferPointer
    /// One output buffer for every connection: the responses to one read are written into it and
    /// handed to the socket before the callback returns (only what the socket would not take is
    /// copied out), so it is free again for the next read.
    let output = OutputBuffer(capacity: 256 * 1024)

    private init() {
        uv = .allocate(capacity: 1)
        listener = .allocate(capacity: 1)
        stopSignal = .allocate(capacity: 1)
        readBuffer = .allocate(byteCount: 64 * 1024, alignment: 16)
    }

    /// Starts a loop listening on `address`:`port` and returns once it listens, or throws what
    /// went wrong (the thread has then finished and everything is freed).
    static func start(address: String = "127.0.0.1", port: Int) throws(LoopbackHTTPServerError) -> ServerLoop {
        let loop = ServerLoop()
        let startup = StartupReport()
        guard let thread = ServerThread.start(name: "loopback-http", { [loop] in
            loop.run(address: address, port: port) { startup.post($0) }
        }) else {
            throw LoopbackHTTPServerError(operation: "pthread_create", code: -EAGAIN)
        }
        loop.thread = thread
        switch startup.wait() {
        case .success(let bound):
            loop.port = bound
            return loop
        case .failure(let error):
            thread.join()
            throw error
        }
    }

    /// Asks the loop thread to close every handle, then waits for it to finish. Call once.
    func stopAndJoin() {
        uv_async_send(stopSignal)
        thread?.join()
        thread = nil
    }

    deinit {
        readBuffer.deallocate()
        stopSignal.deallocate()
        listener.deallocate()
        uv.deallocate()
    }

    /// Traps in debug builds when called off the loop thread: loop-owned state is not
    /// thread-safe.
    @inline(__always)
    func assertInLoop(file: StaticString = #fileID, line: UInt = #line) {
        assert(loopThreadID.map { pthread_equal($0, pthread_self()) != 0 } ?? false,
               "loop-owned state touched off the server's loop thread", file: file, line: line)
    }

    static func from(_ uv: UnsafeMutablePointer<uv_loop_t>?) -> ServerLoop {
        Unmanaged<ServerLoop>.fromOpaque(uv!.pointee.data!).takeUnretainedValue()
    }

    // MARK: - Loop thread

    private var listenerStream: UnsafeMutablePointer<uv_stream_t> {
        UnsafeMutableRawPointer(listener).assumingMemoryBound(to: uv_stream_t.self)
    }

    /// The thread's body: set up, report, serve until every handle is closed, tear down.
    private func run(address: String, port: Int, report: (Result<Int, LoopbackHTTPServerError>) -> Void) {
        loopThreadID = pthread_self()
        // A write to a socket the client has closed raises SIGPIPE in the writing thread, which
        // would kill the process; libuv writes with write(2), so MSG_NOSIGNAL is not an option.
        // Blocked on this thread only, the write fails with EPIPE and the process's own signal
        // disposition is left alone.
        var blocked = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &blocked, nil)

        let status = uv_loop_init(uv)
        guard status == 0 else {
            report(.failure(LoopbackHTTPServerError(operation: "uv_loop_init", code: status)))
            return
        }
        uv.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        let setUp = listen(address: address, port: port)
        if case .failure = setUp { closeEverything() }
        report(setUp)
        // Returns once `closeEverything` has closed every handle and their callbacks have run.
        uv_run(uv, UV_RUN_DEFAULT)
        let closed = uv_loop_close(uv)
        assert(closed == 0, "a handle outlived the server's loop")
    }

    /// Creates the stop signal and the listener; returns the bound port.
    private func listen(address: String, port: Int) -> Result<Int, LoopbackHTTPServerError> {
        stopSignal.pointee.data = nil
        uv_async_init(uv, stopSignal) { handle in
            ServerLoop.from(handle!.pointee.loop).closeEverything()
        }
        uv_tcp_init(uv, listener)
        // nil marks the listener among the TCP handles (a connection's data is its object).
        listener.pointee.data = nil
        let place = "\(address):\(port)"
        var socketAddress = sockaddr_in()
        var status = uv_ip4_addr(address, Int32(port), &socketAddress)
        if status == 0 {
            status = withUnsafePointer(to: &socketAddress) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { uv_tcp_bind(listener, $0, 0) }
            }
        }
        guard status == 0 else { return .failure(.init(operation: "bind \(place)", code: status)) }
        status = uv_listen(listenerStream, SOMAXCONN) { server, status in
            guard status == 0 else { return }
            ServerLoop.from(server!.pointee.loop).accept()
        }
        guard status == 0 else { return .failure(.init(operation: "listen \(place)", code: status)) }
        var bound = sockaddr_storage()
        var length = Int32(MemoryLayout<sockaddr_storage>.size)
        status = withUnsafeMutablePointer(to: &bound) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { uv_tcp_getsockname(listener, $0, &length) }
        }
        guard status == 0 else { return .failure(.init(operation: "getsockname \(place)", code: status)) }
        let boundPort = withUnsafePointer(to: &bound) {
            $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
        }
        return .success(boundPort)
    }

    /// Accepts one pending connection and starts serving it.
    private func accept() {
        assertInLoop()
        let connection = ServerConnection(loop: self)
        guard uv_accept(listenerStream, connection.stream) == 0 else {
            connection.close()
            return
        }
        connection.start()
    }

    /// Closes every handle: the listener, the stop signal and every connection, whatever it was
    /// doing. Pending writes and shutdowns then complete with UV_ECANCELED and free themselves;
    /// `uv_run` returns once all close callbacks have run.
    private func closeEverything() {
        assertInLoop()
        uv_walk(uv, { handle, _ in
            guard let handle, uv_is_closing(handle) == 0 else { return }
            if handle.pointee.type == UV_TCP, let data = handle.pointee.data {
                ServerConnection.from(data).close()
            } else {
                uv_close(handle, nil)
            }
        }, nil)
    }
}

/// How the loop thread tells `ServerLoop.start` whether it listens: posted once, awaited once.
private final class StartupReport: Sendable {
    private let outcome = Mutex<Result<Int, LoopbackHTTPServerError>?>(nil)
    private let posted = DispatchSemaphore(value: 0)

    /// Called on the loop thread once the listener is up (or could not be set up).
    func post(_ result: Result<Int, LoopbackHTTPServerError>) {
        outcome.withLock { $0 = result }
        posted.signal()
    }

    /// Waits for `post` and returns what it posted.
    func wait() -> Result<Int, LoopbackHTTPServerError> {
        posted.wait()
        return outcome.withLock { $0 }!
    }
}
