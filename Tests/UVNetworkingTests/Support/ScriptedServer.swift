// A loopback TCP server whose connections follow a test-provided script, for byte-level
// fault injection (truncated bodies, resets, odd framing, slow peers), plus `RawTCPClient`,
// a blocking client that sends exact bytes. Both sit on plain POSIX sockets with their own
// threads: this is test code, so blocking calls are fine and they never touch the library's
// event loop.
//
// Every socket is non-blocking and every wait is a poll() on the socket plus the server's
// stop pipe, so `stop()` wakes scripts wherever they are. Sends use MSG_NOSIGNAL instead of
// ignoring SIGPIPE process-wide: a process-wide SIG_IGN would hide a missing SIGPIPE
// defence in the library under test.

#if canImport(Glibc)
import Glibc
#endif
import Synchronization

// MARK: - Errors

/// Why a scripted or raw socket operation failed.
enum LoopbackSocketError: Error, Equatable, CustomStringConvertible {
    /// A system call failed; `errno` is the error code (e.g. ECONNRESET).
    case system(call: String, errno: Int32)
    /// The deadline passed while waiting for `what`.
    case timedOut(waitingFor: String)
    /// The peer closed (EOF) while reading `what`.
    case peerClosed(during: String)
    /// The server is stopping or the connection was already closed.
    case stopped
    /// The peer sent bytes that are not the expected HTTP/1.1 framing.
    case malformed(String)

    var description: String {
        switch self {
        case .system(let call, let code): return "\(call) failed: \(String(cString: strerror(code))) (errno \(code))"
        case .timedOut(let what): return "timed out waiting for \(what)"
        case .peerClosed(let what): return "peer closed the connection during \(what)"
        case .stopped: return "the server was stopped or the connection closed"
        case .malformed(let why): return "malformed HTTP: \(why)"
        }
    }
}

// MARK: - Requests and responses

/// One HTTP request as the server read it off the wire.
struct ScriptedRequest: Sendable {
    var method: String
    var target: String
    var version: String
    /// Header fields in wire order, names as sent.
    var headers: [(String, String)]
    /// The decoded body (chunked framing removed).
    var body: [UInt8]
    /// The request head exactly as received, including the final CRLFCRLF.
    var head: String

    /// The first value of header `name` (case-insensitive).
    func header(_ name: String) -> String? { headerValue(headers, name) }
    /// Every value of header `name` (case-insensitive), in wire order.
    func headerValues(_ name: String) -> [String] { allHeaderValues(headers, name) }
    var bodyText: String { String(decoding: body, as: UTF8.self) }
}

/// One HTTP response as `RawTCPClient` read it off the wire.
struct RawResponse: Sendable {
    var version: String
    var status: Int
    var reason: String
    var headers: [(String, String)]
    var body: [UInt8]
    /// The response head exactly as received, including the final CRLFCRLF.
    var head: String

    func header(_ name: String) -> String? { headerValue(headers, name) }
    var bodyText: String { String(decoding: body, as: UTF8.self) }
}

/// Builders for the response text a script writes.
enum ScriptedResponse {
    /// A complete response with a Content-Length framed `body`.
    static func text(_ body: String, status: Int = 200, reason: String = "OK", headers: [(String, String)] = []) -> String {
        var head = "HTTP/1.1 \(status) \(reason)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        return head + "Content-Length: \(body.utf8.count)\r\n\r\n" + body
    }
}

private func headerValue(_ headers: [(String, String)], _ name: String) -> String? {
    allHeaderValues(headers, name).first
}

private func allHeaderValues(_ headers: [(String, String)], _ name: String) -> [String] {
    let wanted = name.lowercased()
    return headers.filter { $0.0.lowercased() == wanted }.map(\.1)
}

// MARK: - Server

/// A loopback server that plays a script on each accepted connection.
///
/// Call `stop()` when done (`defer { server.stop() }`); deinit also stops, but a script that
/// captures the server keeps it alive.
final class ScriptedServer: @unchecked Sendable {
    // @unchecked: all mutable state lives in `core`, behind its Mutex; the rest is immutable.
    private let core: ScriptedServerCore

    /// Binds 127.0.0.1 on an ephemeral port (or ::1 with `ipv6: true`; or `port`) and runs
    /// `script` on a new thread for each accepted connection. A script that throws just closes
    /// its connection; a script that returns without closing gets an orderly close.
    init(ipv6: Bool = false, port: Int = 0, _ script: @escaping @Sendable (ScriptedConnection) throws -> Void) throws {
        core = try ScriptedServerCore(ipv6: ipv6, port: port, script: script)
        do {
            try core.startAccepting()
        } catch {
            core.stop()
            throw error
        }
    }

    deinit { core.stop() }

    var port: Int { core.port }
    /// Connections accepted so far.
    var acceptedCount: Int { core.state.withLock { $0.accepted } }
    /// Accepted connections the server has not closed yet.
    var openConnectionCount: Int { core.state.withLock { $0.connections.count } }
    /// The highest number of simultaneously open accepted connections seen.
    var maxConcurrentConnections: Int { core.state.withLock { $0.maxOpen } }

    /// Closes the listener and every open connection, wakes scripts blocked in this API (their
    /// next call throws `.stopped`) and joins all threads. Idempotent: only the first call
    /// does (and waits for) the work.
    func stop() { core.stop() }
}

/// The shared state behind a `ScriptedServer`; retained by its threads so the public handle
/// can be deinitialised (and stop everything) while they run.
private final class ScriptedServerCore: @unchecked Sendable {
    // @unchecked: `state` is a Mutex; the descriptors and script are immutable after init.
    struct State {
        var accepted = 0
        var maxOpen = 0
        var connections: [Int: ScriptedConnection] = [:]
        var acceptThread: pthread_t?
        var connectionThreads: [Int: pthread_t] = [:]
        /// Threads whose script finished; joined by the accept loop so they do not pile up.
        var finishedThreads: [pthread_t] = []
        var stopping = false
    }

    let port: Int
    let state = Mutex(State())
    private let listener: Int32
    private let stopRead: Int32
    private let stopWrite: Int32
    private let script: @Sendable (ScriptedConnection) throws -> Void
    /// Set by the first `stop()`; later calls return at once (a script calling `stop()` while
    /// the first caller joins its thread must not wait for that caller).
    private let stopStarted = Mutex(false)

    init(ipv6: Bool, port: Int, script: @escaping @Sendable (ScriptedConnection) throws -> Void) throws {
        self.script = script
        (listener, self.port) = try Socket.listen(ipv6: ipv6, port: port)
        // A socketpair, not pipe2 (a _GNU_SOURCE call Swift does not import), so close-on-exec
        // is set atomically and a concurrently spawned child cannot inherit it.
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue | SOCK_NONBLOCK.rawValue), 0, &fds) == 0 else {
            let code = errno
            Glibc.close(listener)
            throw LoopbackSocketError.system(call: "socketpair", errno: code)
        }
        (stopRead, stopWrite) = (fds[0], fds[1])
    }

    func startAccepting() throws {
        let thread = try spawnThread { [self] in acceptLoop() }
        state.withLock { $0.acceptThread = thread }
    }

    private func acceptLoop() {
        while true {
            var fds = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: stopRead, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&fds, 2, -1)
            if ready < 0 && errno == EINTR { continue }
            if ready < 0 || fds[1].revents != 0 { return }
            reapFinishedThreads()
            let fd = Socket.accept(listener)
            if fd < 0 { continue } // EAGAIN/EINTR/ECONNABORTED: the peer gave up; keep listening.
            let connection: ScriptedConnection? = state.withLock { state in
                guard !state.stopping else { return nil }
                let connection = ScriptedConnection(fd: fd, index: state.accepted, stopFD: stopRead) { [weak self] index in
                    self?.state.withLock { _ = $0.connections.removeValue(forKey: index) }
                }
                state.accepted += 1
                state.connections[connection.index] = connection
                state.maxOpen = max(state.maxOpen, state.connections.count)
                return connection
            }
            guard let connection else { Glibc.close(fd); return }
            // Hold the lock across the spawn so the thread cannot finish before it is registered.
            let spawned = state.withLock { state in
                guard let thread = try? spawnThread({ [self] in runScript(on: connection) }) else { return false }
                state.connectionThreads[connection.index] = thread
                return true
            }
            if !spawned { connection.close() }
        }
    }

    private func runScript(on connection: ScriptedConnection) {
        do { try script(connection) } catch {}
        connection.close()
        state.withLock { state in
            if let thread = state.connectionThreads.removeValue(forKey: connection.index) {
                state.finishedThreads.append(thread)
            }
        }
    }

    private func reapFinishedThreads() {
        let finished = state.withLock { state in
            defer { state.finishedThreads.removeAll() }
            return state.finishedThreads
        }
        for thread in finished { pthread_join(thread, nil) }
    }

    func stop() {
        let first = stopStarted.withLock { started in
            defer { started = true }
            return !started
        }
        guard first else { return }
        let connections = state.withLock { state in
            state.stopping = true
            return Array(state.connections.values)
        }
        var byte: UInt8 = 1
        _ = Glibc.write(stopWrite, &byte, 1) // Never drained: stays readable for every later poll.
        for connection in connections { connection.abortForStop() }
        let self_ = pthread_self()
        if let acceptThread = state.withLock({ $0.acceptThread }), pthread_equal(acceptThread, self_) == 0 {
            pthread_join(acceptThread, nil)
        }
        // The accept loop has exited, so these lists no longer grow.
        let threads = state.withLock { state in Array(state.connectionThreads.values) + state.finishedThreads }
        for thread in threads where pthread_equal(thread, self_) == 0 { pthread_join(thread, nil) }
        // Scripts that bypassed the API may have left sockets open; close them now.
        for connection in state.withLock({ Array($0.connections.values) }) { connection.close() }
        Glibc.close(listener)
        Glibc.close(stopRead)
        Glibc.close(stopWrite)
    }
}

// MARK: - Connection

/// One accepted connection, driven by a script on its own thread.
final class ScriptedConnection: @unchecked Sendable {
    // @unchecked: the socket descriptor is guarded by `socketState`; the read buffer inside
    // `stream` is only used by the script's thread.
    /// 0 for the first connection the server accepted, 1 for the second, ...
    let index: Int
    private let socketState: Mutex<(fd: Int32, stopped: Bool)>
    private let stream: SocketStream
    private let onClose: @Sendable (Int) -> Void

    fileprivate init(fd: Int32, index: Int, stopFD: Int32, onClose: @escaping @Sendable (Int) -> Void) {
        self.index = index
        self.onClose = onClose
        socketState = Mutex((fd: fd, stopped: false))
        stream = SocketStream(fd: fd, stopFD: stopFD)
    }

    /// Reads one request: head up to CRLFCRLF, then a Content-Length or chunked body.
    /// Throws on EOF, timeout (seconds, for the whole request) or malformed framing.
    func readRequest(timeout: Double = 5) throws -> ScriptedRequest {
        let deadline = monotonicSeconds() + timeout
        var request = try readRequestHead(timeout: timeout)
        request.body = try readRequestBody(of: request, timeout: deadline - monotonicSeconds())
        return request
    }

    /// Reads only a request head (the returned body is empty); for scripts that answer
    /// `Expect: 100-continue` or want to misbehave before the body. Follow with `readRequestBody`.
    func readRequestHead(timeout: Double = 5) throws -> ScriptedRequest {
        guard let request = try readRequestHeadUnlessIdle(timeout: timeout, idleIsError: true) else {
            throw LoopbackSocketError.peerClosed(during: "the wait for a request")
        }
        return request
    }

    /// nil when the peer closes before sending a byte, or (unless `idleIsError`) when
    /// nothing at all arrives before the timeout.
    private func readRequestHeadUnlessIdle(timeout: Double, idleIsError: Bool) throws -> ScriptedRequest? {
        try checkOpen()
        let headBytes: [UInt8]?
        do {
            headBytes = try stream.readHead(deadline: monotonicSeconds() + timeout)
        } catch LoopbackSocketError.timedOut where !idleIsError && stream.bufferedCount == 0 {
            return nil
        }
        guard let headBytes else { return nil }
        let head = try ParsedHead(headBytes)
        guard head.startLine.count == 3 else { throw LoopbackSocketError.malformed("request line \(head.startLine)") }
        return ScriptedRequest(method: head.startLine[0], target: head.startLine[1], version: head.startLine[2],
                               headers: head.headers, body: [], head: head.text)
    }

    /// Reads the body announced by `request`'s head (Content-Length or chunked; none otherwise).
    func readRequestBody(of request: ScriptedRequest, timeout: Double = 5) throws -> [UInt8] {
        try checkOpen()
        let deadline = monotonicSeconds() + timeout
        if isChunked(request.headers) { return try stream.readChunkedBody(deadline: deadline) }
        if let length = try contentLength(request.headers) { return try stream.readExactly(length, deadline: deadline) }
        return []
    }

    /// Reads exactly `count` bytes as they are on the wire (no framing removed), e.g. a chunked
    /// body to check its framing.
    func readBytes(_ count: Int, timeout: Double = 5) throws -> [UInt8] {
        try checkOpen()
        return try stream.readExactly(count, deadline: monotonicSeconds() + timeout)
    }

    /// Reads and drops `count` bytes without keeping them (a body too large to hold), calling
    /// `progress` with the running total now and then. Throws on EOF before `count` bytes.
    func discard(_ count: Int, timeout: Double = 60, progress: (Int) -> Void = { _ in }) throws {
        try checkOpen()
        try stream.discard(count, deadline: monotonicSeconds() + timeout, progress: progress)
    }

    /// Everything the peer sends until it closes (FIN or RST), without framing; throws if it
    /// stays open past the timeout.
    func readUntilClose(timeout: Double = 5) throws -> [UInt8] {
        try checkOpen()
        return try stream.readToEOF(deadline: monotonicSeconds() + timeout, resetIsEOF: true)
    }

    func write(_ text: String) throws { try write(Array(text.utf8)) }

    /// Writes all of `bytes`, waiting (up to 10 s) while the peer's window is full.
    func write(_ bytes: [UInt8]) throws {
        try checkOpen()
        try stream.writeAll(bytes, deadline: monotonicSeconds() + 10)
    }

    /// Sleeps; returns early if the server is stopping.
    func pause(_ seconds: Double) {
        stream.sleep(seconds)
    }

    /// Orderly close (FIN). Unread input is discarded first: closing a socket with unread
    /// data makes Linux send RST instead, which would turn a clean close into a reset.
    func close() {
        closeSocket { fd in
            shutdown(fd, Int32(SHUT_WR))
            var scratch = [UInt8](repeating: 0, count: 16_384)
            while recv(fd, &scratch, scratch.count, Int32(MSG_DONTWAIT)) > 0 {}
        }
    }

    /// Abortive close (RST): SO_LINGER {on, 0 s}, then close.
    func reset() {
        closeSocket { fd in
            var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
            setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        }
    }

    /// Reads (and discards) until the peer closes; true if it closed (FIN or RST) within the timeout.
    func waitForPeerClose(timeout: Double = 5) -> Bool {
        guard (try? checkOpen()) != nil else { return false }
        return stream.waitForEOF(deadline: monotonicSeconds() + timeout)
    }

    /// Serves requests on this connection with `respond` until the peer closes between
    /// requests (returns normally), stays idle for `idleTimeout` seconds (returns), or the
    /// request or response says `Connection: close` (closes after the response, returns).
    /// EOF in the middle of a request throws.
    func serveKeepAlive(idleTimeout: Double = 60, _ respond: (ScriptedRequest) throws -> String) throws {
        while true {
            guard var request = try readRequestHeadUnlessIdle(timeout: idleTimeout, idleIsError: false) else { return }
            request.body = try readRequestBody(of: request)
            let response = try respond(request)
            try write(response)
            let responseHead = response.split(separator: "\r\n\r\n", maxSplits: 1).first.map(String.init) ?? ""
            let responseHeaders = (try? ParsedHead(Array((responseHead + "\r\n\r\n").utf8)).headers) ?? []
            if wantsClose(request.headers) || wantsClose(responseHeaders) {
                close()
                return
            }
        }
    }

    // MARK: Internals

    private func checkOpen() throws {
        let (fd, stopped) = socketState.withLock { ($0.fd, $0.stopped) }
        if fd < 0 || stopped { throw LoopbackSocketError.stopped }
    }

    private func closeSocket(_ beforeClose: (Int32) -> Void) {
        let closed = socketState.withLock { state -> Bool in
            guard state.fd >= 0 else { return false }
            beforeClose(state.fd)
            Glibc.close(state.fd)
            state.fd = -1
            return true
        }
        if closed { onClose(index) }
    }

    /// Called by `stop()`: marks the connection stopped and shuts the socket down (without
    /// closing it, so the descriptor cannot be reused under a script still polling it).
    fileprivate func abortForStop() {
        socketState.withLock { state in
            state.stopped = true
            if state.fd >= 0 { shutdown(state.fd, Int32(SHUT_RDWR)) }
        }
    }
}

private func wantsClose(_ headers: [(String, String)]) -> Bool {
    allHeaderValues(headers, "connection").contains { value in
        value.split(separator: ",").contains { $0.trimmingSpaces().lowercased() == "close" }
    }
}

private func isChunked(_ headers: [(String, String)]) -> Bool {
    // Chunked applies when it is the last transfer coding.
    guard let last = allHeaderValues(headers, "transfer-encoding").last?.split(separator: ",").last else { return false }
    return last.trimmingSpaces().lowercased() == "chunked"
}

private func contentLength(_ headers: [(String, String)]) throws -> Int? {
    guard let value = headerValue(headers, "content-length") else { return nil }
    guard let length = Int(value.trimmingSpaces()), length >= 0 else {
        throw LoopbackSocketError.malformed("Content-Length \(value)")
    }
    return length
}

// MARK: - Raw client

/// A blocking loopback TCP client that writes exact bytes and reads raw HTTP/1.1 responses.
final class RawTCPClient {
    private var fd: Int32
    private let stream: SocketStream

    /// Connects to 127.0.0.1:`port` (or [::1] with `ipv6: true`).
    init(port: Int, ipv6: Bool = false, timeout: Double = 5) throws {
        fd = try Socket.connect(port: port, ipv6: ipv6, deadline: monotonicSeconds() + timeout)
        stream = SocketStream(fd: fd, stopFD: -1)
    }

    deinit { close() }

    func write(_ text: String) throws { try write(Array(text.utf8)) }

    func write(_ bytes: [UInt8]) throws {
        guard fd >= 0 else { throw LoopbackSocketError.stopped }
        try stream.writeAll(bytes, deadline: monotonicSeconds() + 10)
    }

    /// Reads one response. Bodies are framed by status (1xx/204/304 and replies to HEAD have
    /// none), chunked encoding, Content-Length, or else the connection closing.
    func readResponse(timeout: Double = 5, toHEAD: Bool = false) throws -> RawResponse {
        guard fd >= 0 else { throw LoopbackSocketError.stopped }
        let deadline = monotonicSeconds() + timeout
        guard let headBytes = try stream.readHead(deadline: deadline) else {
            throw LoopbackSocketError.peerClosed(during: "the wait for a response")
        }
        let head = try ParsedHead(headBytes)
        guard head.startLine.count >= 2, let status = Int(head.startLine[1]) else {
            throw LoopbackSocketError.malformed("status line \(head.startLine)")
        }
        var response = RawResponse(version: head.startLine[0], status: status,
                                   reason: head.startLine.dropFirst(2).joined(separator: " "),
                                   headers: head.headers, body: [], head: head.text)
        if toHEAD || status / 100 == 1 || status == 204 || status == 304 { return response }
        if isChunked(head.headers) {
            response.body = try stream.readChunkedBody(deadline: deadline)
        } else if let length = try contentLength(head.headers) {
            response.body = try stream.readExactly(length, deadline: deadline)
        } else {
            response.body = try stream.readToEOF(deadline: deadline)
        }
        return response
    }

    /// Reads everything until the peer closes. Throws `.system(call: "recv", errno: ECONNRESET)`
    /// if the peer resets, `.timedOut` if it stays open.
    func readToEOF(timeout: Double = 5) throws -> [UInt8] {
        guard fd >= 0 else { throw LoopbackSocketError.stopped }
        return try stream.readToEOF(deadline: monotonicSeconds() + timeout)
    }

    /// Reads (and discards) until the peer closes; true if it closed (FIN or RST) within the timeout.
    func waitForPeerClose(timeout: Double = 5) -> Bool {
        fd >= 0 && stream.waitForEOF(deadline: monotonicSeconds() + timeout)
    }

    /// The local (ephemeral) port of this connection.
    var localPort: Int { Socket.localPort(fd) }

    func close() {
        if fd >= 0 { Glibc.close(fd); fd = -1 }
    }
}

// MARK: - Socket plumbing

/// Thin wrappers over the socket calls both ends need.
enum Socket {
    /// An IPv6 listener is IPv6 only, so that 127.0.0.1 and ::1 can be two servers on one port.
    static func listen(ipv6: Bool, backlog: Int32 = 128, port: Int = 0) throws -> (fd: Int32, port: Int) {
        let fd = socket(ipv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue | SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw LoopbackSocketError.system(call: "socket", errno: errno) }
        do {
            var one: Int32 = 1
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
            if ipv6 { setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size)) }
            try withLoopbackAddress(ipv6: ipv6, port: port) { address, length in
                guard bind(fd, address, length) == 0 else { throw LoopbackSocketError.system(call: "bind", errno: errno) }
            }
            guard Glibc.listen(fd, backlog) == 0 else { throw LoopbackSocketError.system(call: "listen", errno: errno) }
            return (fd, localPort(fd))
        } catch {
            Glibc.close(fd)
            throw error
        }
    }

    /// accept4 with close-on-exec and non-blocking set atomically: a plain accept + fcntl
    /// would let a child spawned in between (e.g. a shared nginx) inherit the connection and
    /// keep it open after the script closes it.
    static func accept(_ listener: Int32) -> Int32 {
        accept4(listener, nil, nil, Int32(SOCK_CLOEXEC.rawValue | SOCK_NONBLOCK.rawValue))
    }

    // accept4 needs _GNU_SOURCE, which Swift's Glibc module does not define: look it up.
    private typealias Accept4 = @convention(c) (Int32, UnsafeMutablePointer<sockaddr>?, UnsafeMutablePointer<socklen_t>?, Int32) -> Int32
    // nonisolated(unsafe): written once by the lazy initialiser, then only read.
    private nonisolated(unsafe) static let accept4: Accept4 = {
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "accept4") else { fatalError("glibc has no accept4") }
        return unsafeBitCast(symbol, to: Accept4.self)
    }()

    static func connect(port: Int, ipv6: Bool, deadline: Double) throws -> Int32 {
        let fd = socket(ipv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue | SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw LoopbackSocketError.system(call: "socket", errno: errno) }
        do {
            let started = try withLoopbackAddress(ipv6: ipv6, port: port) { address, length in
                Glibc.connect(fd, address, length) == 0 ? 0 : errno
            }
            if started == EINPROGRESS {
                try waitFor(Int16(POLLOUT), on: fd, stopFD: -1, deadline: deadline, what: "connect")
                var result: Int32 = 0
                var size = socklen_t(MemoryLayout<Int32>.size)
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &result, &size)
                if result != 0 { throw LoopbackSocketError.system(call: "connect", errno: result) }
            } else if started != 0 {
                throw LoopbackSocketError.system(call: "connect", errno: started)
            }
            return fd
        } catch {
            Glibc.close(fd)
            throw error
        }
    }

    static func localPort(_ fd: Int32) -> Int {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let ok = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) == 0 }
        }
        guard ok else { return -1 }
        return withUnsafeBytes(of: storage) { raw in
            // sin_port and sin6_port both sit right after the 2-byte family, in network order.
            Int(UInt16(raw[2]) << 8 | UInt16(raw[3]))
        }
    }

    private static func withLoopbackAddress<R>(ipv6: Bool, port: Int, _ body: (UnsafePointer<sockaddr>, socklen_t) throws -> R) throws -> R {
        if ipv6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = in_port_t(UInt16(port).bigEndian)
            address.sin6_addr = in6addr_loopback
            return try withUnsafePointer(to: &address) {
                try $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { try body($0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return try withUnsafePointer(to: &address) {
            try $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { try body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
    }
}

/// Polls `fd` for `events` (and `stopFD` for readability, when >= 0) until `deadline`.
private func waitFor(_ events: Int16, on fd: Int32, stopFD: Int32, deadline: Double, what: String) throws {
    while true {
        let remaining = deadline - monotonicSeconds()
        if remaining <= 0 { throw LoopbackSocketError.timedOut(waitingFor: what) }
        var fds = [pollfd(fd: fd, events: events, revents: 0),
                   pollfd(fd: stopFD, events: Int16(POLLIN), revents: 0)] // poll ignores fd -1
        let ready = poll(&fds, 2, Int32(min(remaining * 1000 + 1, 60_000)))
        if ready < 0 {
            if errno == EINTR { continue }
            throw LoopbackSocketError.system(call: "poll", errno: errno)
        }
        if fds[1].revents != 0 { throw LoopbackSocketError.stopped }
        if fds[0].revents != 0 { return } // Ready, or an error/hangup the next call will report.
    }
}

/// A non-blocking socket with a read buffer and the HTTP/1.1 framing both ends share.
private final class SocketStream {
    private let fd: Int32
    private let stopFD: Int32
    private var buffer: [UInt8] = []

    init(fd: Int32, stopFD: Int32) {
        self.fd = fd
        self.stopFD = stopFD
    }

    var bufferedCount: Int { buffer.count }

    /// Appends whatever arrives next to the buffer; false on EOF.
    private func fill(deadline: Double, what: String) throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            try waitFor(Int16(POLLIN), on: fd, stopFD: stopFD, deadline: deadline, what: what)
            let count = recv(fd, &chunk, chunk.count, 0)
            if count > 0 {
                buffer.append(contentsOf: chunk[0..<count])
                return true
            }
            if count == 0 { return false }
            if errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK { continue }
            throw LoopbackSocketError.system(call: "recv", errno: errno)
        }
    }

    /// The head up to and including CRLFCRLF; nil if the peer closed before sending a byte.
    func readHead(deadline: Double) throws -> [UInt8]? {
        var searchFrom = 0
        while true {
            if let end = find([13, 10, 13, 10], from: searchFrom) {
                let head = Array(buffer[0..<end + 4])
                buffer.removeFirst(end + 4)
                return head
            }
            searchFrom = max(0, buffer.count - 3)
            let wasEmpty = buffer.isEmpty
            if try !fill(deadline: deadline, what: wasEmpty ? "a request head" : "the rest of a head") {
                if wasEmpty { return nil }
                throw LoopbackSocketError.peerClosed(during: "a head")
            }
        }
    }

    /// One line without its CRLF.
    private func readLine(deadline: Double, what: String) throws -> [UInt8] {
        while true {
            if let end = find([13, 10], from: 0) {
                let line = Array(buffer[0..<end])
                buffer.removeFirst(end + 2)
                return line
            }
            if try !fill(deadline: deadline, what: what) { throw LoopbackSocketError.peerClosed(during: what) }
        }
    }

    func readExactly(_ count: Int, deadline: Double) throws -> [UInt8] {
        while buffer.count < count {
            if try !fill(deadline: deadline, what: "a \(count)-byte body") {
                throw LoopbackSocketError.peerClosed(during: "a \(count)-byte body (got \(buffer.count))")
            }
        }
        defer { buffer.removeFirst(count) }
        return Array(buffer[0..<count])
    }

    /// Decodes chunked framing; chunk extensions and trailers are read and dropped.
    func readChunkedBody(deadline: Double) throws -> [UInt8] {
        var body: [UInt8] = []
        while true {
            let line = try readLine(deadline: deadline, what: "a chunk size line")
            let sizeText = String(decoding: line.prefix { $0 != UInt8(ascii: ";") }, as: UTF8.self).trimmingSpaces()
            guard let size = Int(sizeText, radix: 16), size >= 0 else {
                throw LoopbackSocketError.malformed("chunk size line \(String(decoding: line, as: UTF8.self))")
            }
            if size == 0 {
                while try !readLine(deadline: deadline, what: "the chunked trailer").isEmpty {}
                return body
            }
            body += try readExactly(size, deadline: deadline)
            guard try readLine(deadline: deadline, what: "a chunk's CRLF").isEmpty else {
                throw LoopbackSocketError.malformed("chunk data longer than its size \(size)")
            }
        }
    }

    /// With `resetIsEOF`, a reset ends the read like a close (what was read so far is returned).
    func readToEOF(deadline: Double, resetIsEOF: Bool = false) throws -> [UInt8] {
        do {
            while try fill(deadline: deadline, what: "the peer to close") {}
        } catch LoopbackSocketError.system(call: _, errno: ECONNRESET) where resetIsEOF {}
        defer { buffer.removeAll() }
        return buffer
    }

    func discard(_ count: Int, deadline: Double, progress: (Int) -> Void) throws {
        var done = 0
        var reported = 0
        while done < count {
            if buffer.isEmpty, try !fill(deadline: deadline, what: "a \(count)-byte body") {
                throw LoopbackSocketError.peerClosed(during: "a \(count)-byte body (got \(done))")
            }
            let take = min(buffer.count, count - done)
            buffer.removeFirst(take)
            done += take
            if done - reported >= 1 << 20 || done == count {
                reported = done
                progress(done)
            }
        }
    }

    func waitForEOF(deadline: Double) -> Bool {
        buffer.removeAll()
        do {
            while try fill(deadline: deadline, what: "the peer to close") { buffer.removeAll() }
            return true
        } catch LoopbackSocketError.system(call: _, errno: ECONNRESET) {
            return true
        } catch {
            return false
        }
    }

    /// Sends everything, looping over partial writes; MSG_NOSIGNAL turns SIGPIPE into EPIPE.
    func writeAll(_ bytes: [UInt8], deadline: Double) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { raw in
                send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
            }
            if sent >= 0 {
                offset += sent
            } else if errno == EAGAIN || errno == EWOULDBLOCK {
                try waitFor(Int16(POLLOUT), on: fd, stopFD: stopFD, deadline: deadline, what: "room to write")
            } else if errno != EINTR {
                throw LoopbackSocketError.system(call: "send", errno: errno)
            }
        }
    }

    /// Sleeps for `seconds`, waking early when the stop pipe becomes readable.
    func sleep(_ seconds: Double) {
        let deadline = monotonicSeconds() + seconds
        while true {
            let remaining = deadline - monotonicSeconds()
            if remaining <= 0 { return }
            var stop = pollfd(fd: stopFD, events: Int16(POLLIN), revents: 0)
            let ready = poll(&stop, 1, Int32(min(remaining * 1000 + 1, 60_000)))
            if ready > 0 { return }
        }
    }

    private func find(_ needle: [UInt8], from start: Int) -> Int? {
        guard buffer.count >= needle.count, start <= buffer.count - needle.count else { return nil }
        for index in start...(buffer.count - needle.count) where buffer[index] == needle[0] {
            if buffer[index..<index + needle.count].elementsEqual(needle) { return index }
        }
        return nil
    }
}

/// A head split into its start line's words and its header fields.
private struct ParsedHead {
    var startLine: [String]
    var headers: [(String, String)]
    var text: String

    init(_ bytes: [UInt8]) throws {
        text = String(decoding: bytes, as: UTF8.self)
        var lines = text.split(separator: "\r\n", omittingEmptySubsequences: false).map(String.init)
        while lines.last == "" { lines.removeLast() }
        guard let first = lines.first, !first.isEmpty else { throw LoopbackSocketError.malformed("empty start line") }
        startLine = first.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        headers = try lines.dropFirst().map { line in
            guard let colon = line.firstIndex(of: ":") else { throw LoopbackSocketError.malformed("header line \(line)") }
            return (String(line[..<colon]), String(line[line.index(after: colon)...]).trimmingSpaces())
        }
    }
}

extension StringProtocol {
    /// Drops leading and trailing spaces and tabs (HTTP optional whitespace).
    fileprivate func trimmingSpaces() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let start = firstIndex(where: { !isSpace($0) }) else { return "" }
        let end = lastIndex(where: { !isSpace($0) })!
        return String(self[start...end])
    }
}

/// Starts a joinable POSIX thread running `body`.
private func spawnThread(_ body: @escaping @Sendable () -> Void) throws -> pthread_t {
    final class Box { let body: @Sendable () -> Void; init(_ body: @escaping @Sendable () -> Void) { self.body = body } }
    let context = Unmanaged.passRetained(Box(body)).toOpaque()
    var thread = pthread_t()
    let result = pthread_create(&thread, nil, { context in
        Unmanaged<Box>.fromOpaque(context!).takeRetainedValue().body()
        return nil
    }, context)
    guard result == 0 else {
        Unmanaged<Box>.fromOpaque(context).release()
        throw LoopbackSocketError.system(call: "pthread_create", errno: result)
    }
    return thread
}
