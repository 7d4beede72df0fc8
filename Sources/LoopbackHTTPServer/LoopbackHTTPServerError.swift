import CUV

/// Why `LoopbackHTTPServer.start()` failed: the libuv call that refused and its error.
public struct LoopbackHTTPServerError: Error, Sendable, CustomStringConvertible {
    /// What was being done, e.g. "bind 127.0.0.1:80".
    public let operation: String
    /// libuv's error code (a negated errno, e.g. UV_EADDRINUSE).
    public let code: Int32

    /// Creates the error for `operation` failing with libuv's `code`.
    public init(operation: String, code: Int32) {
        self.operation = operation
        self.code = code
    }

    /// "bind 127.0.0.1:80: permission denied (EACCES)".
    public var description: String {
        let message = uv_strerror(code).map { String(cString: $0) } ?? "error \(code)"
        let name = uv_err_name(code).map { String(cString: $0) } ?? "\(code)"
        return "\(operation): \(message) (\(name))"
    }
}
