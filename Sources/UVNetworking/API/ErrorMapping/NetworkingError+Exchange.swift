import UVHTTP1

extension NetworkingError {
    /// The public error for a connection or exchange failure: the one place `ExchangeError` (and
    /// the request body's and the decoder's errors within it) becomes a `NetworkingError`.
    init(_ error: ExchangeError) {
        switch error {
        case .connectTimeout(let host, let port, let milliseconds, let tls):
            let what = tls ? "connecting to and the TLS handshake with" : "connecting to"
            self.init(.connectTimeout, "\(what) \(host):\(port) took longer than \(milliseconds) ms")
        case .connectFailed(let host, let port, let status):
            self.init(status == UVError.connectionRefused ? .connectionRefused : .connectFailed,
                      "connecting to \(host):\(port) failed: \(UVError.describe(status))")
        case .transport(let error):
            self.init(error)
        case .descriptorsExhausted(let host, let port, let status):
            self.init(.connectFailed, "connecting to \(host):\(port) failed: \(UVError.describe(status)): the process has no file descriptor "
                      + "left (its limit, RLIMIT_NOFILE, is \(DescriptorLimit.soft.map(String.init) ?? "unlimited")) and the session had no connection open to close for one")
        case .noConnection(let host, let port):
            self.init(.connectFailed, "no connection to \(host):\(port)")
        case .writeFailed(let status):
            self.init(.writeFailed, "writing the request failed: \(UVError.describe(status))")
        case .socketFailed(let status):
            let reset = status == UVError.connectionReset || status == UVError.brokenPipe
            self.init(reset ? .connectionReset : .writeFailed, "the connection failed: \(UVError.describe(status))")
        case .bytesOutsideResponse(let count):
            self.init(.malformedResponse, "the server sent \(count) bytes outside of any response")
        case .decoding(let error):
            self.init(error.networkingCode, error.reason)
        case .uncleanTLSEnd:
            self.init(.truncatedResponse, "the TLS connection ended without close_notify inside a body that only the end of the connection frames; it may have been cut short")
        case .closedWithoutResponse:
            self.init(.connectionClosed, "the server closed the connection")
        case .closedInsideResponse:
            self.init(.truncatedResponse, "the server closed the connection inside the response")
        case .requestBody(let error):
            self.init(error)
        case .http2(let error):
            self.init(error)
        }
    }

    /// The public error for an HTTP/2 failure.
    init(_ error: HTTP2Error) {
        switch error {
        case .protocolViolation(let why):
            self.init(.malformedResponse, "the HTTP/2 server broke the protocol: \(why)")
        case .headerListTooLarge(let limit):
            self.init(.responseHeadTooLarge, "the response's HTTP/2 header list is larger than \(limit) bytes once decoded")
        case .malformedStream(let stream, let code):
            self.init(.malformedResponse, "the response on HTTP/2 stream \(stream) was malformed; the client reset it (\(HTTP2Error.name(of: code)))")
        case .streamReset(let code):
            self.init(.connectionReset, "the server reset the HTTP/2 stream (\(HTTP2Error.name(of: code)))")
        case .goAway(let code):
            self.init(.connectionClosed, "the server closed the HTTP/2 connection with GOAWAY (\(HTTP2Error.name(of: code)))")
        case .engine(let why):
            self.init(.connectFailed, "HTTP/2 failed: \(why)")
        case .unsupportedRequest(let why):
            self.init(.invalidRequestHeader, "the request cannot be sent over HTTP/2: \(why)")
        }
    }

    /// The public error for a failed request body (part of the HTTP/1.1 mapping).
    init(_ error: RequestBodyError) {
        switch error {
        case .readAfterEnd:
            self.init(.bodyStreamFailed, "the body stream was read after it ended")
        case .factoryFailed(let cause):
            self.init(.bodyStreamFailed, "making the body stream failed: \(cause)", underlyingError: cause)
        case .released:
            self.init(.bodyStreamFailed, "the body stream was already released")
        case .readFailed(let bodyRead, let cause):
            self.init(.bodyStreamFailed, "reading the body stream failed after \(bodyRead) bytes: \(cause)", underlyingError: cause)
        case .endedEarly(let bodyRead, let declared):
            self.init(.bodyStreamFailed, "the body stream ended after \(bodyRead) of its declared \(declared) bytes")
        case .longerThanDeclared(let declared):
            self.init(.bodyStreamFailed, "the body stream has more than its declared \(declared) bytes")
        case .notReplayable:
            self.init(.bodyStreamFailed, "the body is a one-shot AsyncSequence already iterated by an earlier attempt: it cannot be replayed for a retry or a 307/308 redirect (make the body with a factory, StreamedBody(length:makeSequence:), to allow it)")
        case .unexplained:
            self.init(.bodyStreamFailed, "the request body failed")
        }
    }
}

extension HTTP1ParseError {
    /// The public error code for a decoder error.
    var networkingCode: NetworkingError.Code {
        switch kind {
        case .malformed: return .malformedResponse
        case .headersTooLarge: return .responseHeadTooLarge
        case .bodyTooLarge: return .responseBodyTooLarge
        case .truncatedBody: return .truncatedResponse
        case .closedBeforeResponse: return .connectionClosed
        case .upgradeRefused: return .unexpectedUpgrade
        }
    }
}
