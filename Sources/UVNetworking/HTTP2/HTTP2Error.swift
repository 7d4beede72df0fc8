/// What went wrong on an HTTP/2 connection or stream, in its own terms. The session maps it
/// (`NetworkingError+Exchange.swift`).
enum HTTP2Error: Error, Equatable {
    /// The server broke RFC 9113 (or one of our limits): the connection ends with GOAWAY.
    case protocolViolation(String)
    /// A response's header list, decoded, is larger than the limit (maximumResponseHeaderBytes).
    case headerListTooLarge(limit: Int)
    /// The response on `stream` was malformed (RFC 9113 §8.1.1): the client reset the stream
    /// with `code`.
    case malformedStream(stream: Int32, code: UInt32)
    /// The server reset the stream with this RFC 9113 error code.
    case streamReset(code: UInt32)
    /// The server said GOAWAY with an error code, and this stream was below its last stream id
    /// but did not finish.
    case goAway(code: UInt32)
    /// nghttp2 refused an operation (out of memory, stream ids exhausted).
    case engine(String)
    /// The request's head could not be expressed as an HTTP/2 header block.
    case unsupportedRequest(String)
}

extension HTTP2Error {
    /// RFC 9113 §7's name for an error code.
    static func name(of code: UInt32) -> String {
        let names = ["NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR", "SETTINGS_TIMEOUT", "STREAM_CLOSED",
                     "FRAME_SIZE_ERROR", "REFUSED_STREAM", "CANCEL", "COMPRESSION_ERROR", "CONNECT_ERROR", "ENHANCE_YOUR_CALM",
                     "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED"]
        return code < names.count ? names[Int(code)] : "error code \(code)"
    }
}
