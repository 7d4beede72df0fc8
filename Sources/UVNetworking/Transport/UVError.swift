import CUV

/// libuv's negative error codes, named.
enum UVError {
    /// "ECONNREFUSED (connection refused)".
    static func describe(_ code: Int32) -> String {
        "\(String(cString: uv_err_name(code))) (\(String(cString: uv_strerror(code))))"
    }

    static func name(_ code: Int32) -> String { String(cString: uv_err_name(code)) }

    /// The statuses the error mapping tells apart (so it need not import libuv).
    static let connectionRefused = UV_ECONNREFUSED.rawValue
    static let connectionReset = UV_ECONNRESET.rawValue
    static let brokenPipe = UV_EPIPE.rawValue

    /// Whether `code` says the process (EMFILE) or the system (ENFILE) has no file descriptor
    /// left for a socket.
    static func isDescriptorShortage(_ code: Int32) -> Bool {
        code == UV_EMFILE.rawValue || code == UV_ENFILE.rawValue
    }
}
