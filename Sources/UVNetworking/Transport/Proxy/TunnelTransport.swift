import CUV

/// A CONNECT tunnel through an HTTP proxy (RFC 9110 §9.3.6): connects to the proxy, asks it for a
/// tunnel to the origin, and once the proxy answers 2xx becomes a plain byte stream to the
/// origin, which is what TLS then runs over. The proxy sees only the origin's host and port.
///
/// Loop-confined. The lower transport's delegate. Keeps its own delegate until it closes (see
/// `StreamTransport.delegate`).
final class TunnelTransport: StreamTransport {
    private enum State { case connecting, awaitingResponse, open, closed }

    @exclusivity(unchecked) var delegate: TransportDelegate?
    private let lower: StreamTransport
    private let authority: String
    private let authorization: String?
    @exclusivity(unchecked) private var state = State.connecting
    /// The proxy's response head as it arrives.
    @exclusivity(unchecked) private var response: [UInt8] = []
    /// A proxy's answer is a short head; anything longer is not one.
    private static let maximumResponseBytes = 16 * 1024

    /// - Parameters:
    ///   - authority: "host:port" of the origin (IPv6 in brackets).
    ///   - authorization: the Proxy-Authorization value, if any.
    init(over lower: StreamTransport, authority: String, authorization: String?) {
        self.lower = lower
        self.authority = authority
        self.authorization = authorization
        lower.delegate = self
    }

    var isClosed: Bool { state == .closed }

    func startReading() { if state == .open { lower.startReading() } }
    func stopReading() { if state == .open { lower.stopReading() } }

    func write(_ bytes: UnsafeRawBufferPointer) -> TransportWriteOutcome {
        guard state == .open else { return .failed(UV_EPIPE.rawValue) }
        return lower.write(bytes)
    }

    func releaseIdleMemory() { lower.releaseIdleMemory() }

    func close(reset: Bool) {
        guard state != .closed else { return }
        state = .closed
        delegate = nil
        lower.close(reset: reset)
    }

    private func fail(_ error: TransportError) {
        guard state != .closed else { return }
        state = .closed
        defer { delegate = nil }
        lower.close(reset: false)
        delegate?.transport(self, didFail: error)
    }

    /// Parses the proxy's answer once its head is complete; returns the bytes after it, or nil
    /// while incomplete.
    private func proxyAnswered() -> [UInt8]? {
        guard let end = Self.headEnd(response) else {
            if response.count > Self.maximumResponseBytes {
                fail(.proxyAnswerTooLong(authority: authority))
            }
            return nil
        }
        let statusLine = String(decoding: response.prefix { $0 != 0x0D && $0 != 0x0A }, as: UTF8.self)
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else {
            fail(.proxyAnswerNotHTTP(authority: authority, statusLine: statusLine))
            return nil
        }
        guard (200..<300).contains(status) else {
            fail(.proxyRefused(authority: authority, status: status, statusLine: statusLine))
            return nil
        }
        return Array(response[end...])
    }

    /// The index just past the blank line that ends a head, if there is one.
    private static func headEnd(_ bytes: [UInt8]) -> Int? {
        var index = 0
        while index + 3 < bytes.count {
            if bytes[index] == 0x0D && bytes[index + 1] == 0x0A && bytes[index + 2] == 0x0D && bytes[index + 3] == 0x0A {
                return index + 4
            }
            index += 1
        }
        return nil
    }
}

extension TunnelTransport: TransportDelegate {
    func transportDidConnect(_ transport: StreamTransport) {
        guard state == .connecting else { return }
        state = .awaitingResponse
        var request = "CONNECT \(authority) HTTP/1.1\r\nHost: \(authority)\r\n"
        if let authorization { request += "Proxy-Authorization: \(authorization)\r\n" }
        request += "\r\n"
        if case .failed(let code) = lower.write(Array(request.utf8)) {
            fail(.proxyWriteFailed(status: code))
            return
        }
        lower.startReading()
    }

    func transport(_ transport: StreamTransport, didFailToConnect code: Int32) {
        guard state == .connecting else { return }
        state = .closed
        defer { delegate = nil }
        // Not expected (a tunnel is made over a connected transport); passed on all the same.
        lower.close(reset: false)
        delegate?.transport(self, didFailToConnect: code)
    }

    func transport(_ transport: StreamTransport, didRead bytes: UnsafeRawBufferPointer) {
        switch state {
        case .open:
            delegate?.transport(self, didRead: bytes)
        case .awaitingResponse:
            response.append(contentsOf: bytes)
            guard let leftover = proxyAnswered() else { return }
            response = []
            state = .open
            // The owner starts reading when it is ready; until then the socket holds the rest.
            lower.stopReading()
            delegate?.transportDidConnect(self)
            // A proxy has no reason to send tunnel bytes before the client spoke; pass any on.
            if !leftover.isEmpty && state == .open {
                leftover.withUnsafeBytes { delegate?.transport(self, didRead: $0) }
            }
        case .connecting, .closed:
            break
        }
    }

    func transportDidReadEOF(_ transport: StreamTransport, cleanly: Bool) {
        if state == .awaitingResponse {
            fail(.proxyClosed(authority: authority))
            return
        }
        if state == .open { delegate?.transportDidReadEOF(self, cleanly: cleanly) }
    }

    func transport(_ transport: StreamTransport, didFailWith code: Int32) {
        if state == .awaitingResponse {
            fail(.proxySocketFailed(status: code))
            return
        }
        if state == .open { delegate?.transport(self, didFailWith: code) }
    }

    func transport(_ transport: StreamTransport, didFail error: TransportError) {
        fail(error)
    }

    func transportDidFinishWriting(_ transport: StreamTransport) {
        if state == .open { delegate?.transportDidFinishWriting(self) }
    }
}

/// The tunnel a pool's connections open through their proxy.
struct TunnelRoute {
    /// "host:port" of the origin.
    let authority: String
    let authorization: String?
}
