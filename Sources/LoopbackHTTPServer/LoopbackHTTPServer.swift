import Synchronization

/// A small HTTP/1.1 server on 127.0.0.1 for demos and tests: no files, no configuration, no
/// internet, and fast enough that a benchmark measures the client rather than the server.
///
/// It runs its own libuv loop on its own thread, so it never competes with the client's loop for
/// a turn. Every connection is keep-alive unless the client asks otherwise; requests may be
/// pipelined and split across reads arbitrarily; request bodies (Content-Length or chunked) are
/// read and dropped. The answers depend on the path only (see `Route`):
///
/// - `/items/N` (N a decimal number): 200 with `itemBody(N)`, a few hundred bytes of text.
/// - `/status/CODE` (CODE 200...599): that status, with a one-line body unless CODE is 204 or 304.
/// - anything else: 404.
///
/// HEAD gets the same head without the body; every other method gets the same answer as GET.
/// A malformed request gets 400 and the connection closes; a request head over
/// `maximumHeadBytes` gets 431 and the connection closes.
///
/// ```swift
/// let server = LoopbackHTTPServer()
/// let port = try server.start()
/// // ... fetch http://127.0.0.1:\(port)/items/1 ...
/// server.stop()
/// ```
public final class LoopbackHTTPServer: Sendable {
    /// The largest request head accepted, in raw bytes: request line, field lines and the empty
    /// line that ends the head. Larger heads are refused with 431.
    public static let maximumHeadBytes = 16 * 1024

    /// The port `start()` binds: 0 lets the kernel pick a free one.
    public let requestedPort: Int
    /// The IPv4 address `start()` binds.
    public let address: String

    /// The running loop, nil while stopped. Held under the lock for the whole of `start` and
    /// `stop`, so concurrent calls run one after the other.
    private let running = Mutex<ServerLoop?>(nil)

    /// Creates a stopped server that will listen on 127.0.0.1:`port` (0: an ephemeral port).
    public init(port: Int = 0) {
        requestedPort = port
        address = "127.0.0.1"
    }

    /// Creates a stopped server that will listen on `address` (an IPv4 literal), for tests:
    /// "0.0.0.0" answers on every 127.x.y.z address, which Linux routes to lo, so one server is
    /// many origins.
    public init(address: String, port: Int = 0) {
        requestedPort = port
        self.address = address
    }

    /// Binds, listens and starts the server's thread; returns the port it listens on. Calling it
    /// on a running server just returns the port; a stopped server can be started again.
    /// - Throws: `LoopbackHTTPServerError` when the port cannot be bound or listened on.
    @discardableResult
    public func start() throws(LoopbackHTTPServerError) -> Int {
        try running.withLock { (loop: inout ServerLoop?) throws(LoopbackHTTPServerError) -> Int in
            if let loop { return loop.port }
            let started = try ServerLoop.start(address: address, port: requestedPort)
            loop = started
            return started.port
        }
    }

    /// The port the server listens on, or nil while it is stopped.
    public var port: Int? {
        running.withLock { $0?.port }
    }

    /// The running loop. Every connection holds a strong reference to its loop, so a test that
    /// keeps only a weak one sees it go away at `stop()` exactly when every connection was freed.
    var currentLoop: ServerLoop? {
        running.withLock { $0 }
    }

    /// Closes the listener and every connection (requests in progress get no answer), waits for
    /// the server's thread to finish and frees everything it held. Does nothing when stopped.
    public func stop() {
        running.withLock { loop in
            loop?.stopAndJoin()
            loop = nil
        }
    }

    /// Stops the server if it is still running: a forgotten `stop()` must not leave a thread
    /// serving a port.
    deinit {
        stop()
    }
}
