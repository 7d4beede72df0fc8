import CUV
import DequeModule
import Foundation

/// Everything a TLS connection to one pool's origin needs: the session's context, the host to
/// verify, the session cache, and who evaluates the server's trust.
struct TLSRoute {
    let context: TLSContext
    /// The host as connected, brackets removed.
    let host: String
    let sessions: TLSSessionCache
    /// Evaluates a chain off the loop; `verdict` runs on the loop thread.
    let evaluateTrust: (_ trust: ServerTrust, _ verdict: @escaping (TrustVerdict) -> Void) -> Void
}

/// What the evaluation of a server's chain decided.
enum TrustVerdict {
    case trusted(verifiedChain: [Certificate])
    case untrusted(SecurityError)
}

/// TLS over a TCP transport: the handshake, the trust evaluation and the records, presented to
/// the HTTP/1.1 connection as a plain byte stream. It reports `transportDidConnect` only once the
/// handshake finished and the server is trusted, so no request byte can leave before.
///
/// Loop-confined. The TCP transport's delegate; the connection's transport. Keeps its own
/// delegate until it closes (see `StreamTransport.delegate`). Its closures hold it strongly (a
/// weak capture would give it a side table) and check the state before acting.
final class TLSTransport: StreamTransport {
    private enum State { case connecting, handshaking, evaluating, open, closed }

    @exclusivity(unchecked) var delegate: TransportDelegate?
    private let loop: EventLoop
    /// The stream TLS runs over: TCP, or a proxy's CONNECT tunnel.
    private let tcp: StreamTransport
    private let tls: TLSConnection
    private let route: TLSRoute
    @exclusivity(unchecked) private var state = State.connecting
    /// Whether the owner wants reads (`startReading` / `stopReading`).
    @exclusivity(unchecked) private var readsWanted = false
    @exclusivity(unchecked) private var drainScheduled = false
    @exclusivity(unchecked) private var tcpEnded = false
    @exclusivity(unchecked) private var reportedEnd = false
    /// For each TCP write still pending, whether it carried the owner's bytes (whose completion
    /// the owner waits for) or only TLS's own (handshake, alerts, close_notify).
    @exclusivity(unchecked) private var pendingWrites = Deque<Bool>()

    init(loop: EventLoop, route: TLSRoute, over lower: StreamTransport) throws(TLSError) {
        self.loop = loop
        self.route = route
        tcp = lower
        tls = try TLSConnection(context: route.context, host: route.host, sessions: route.sessions)
        tcp.delegate = self
    }

    var isClosed: Bool { state == .closed }

    /// TLS facts for metrics, once open.
    var isSessionReused: Bool { tls.isSessionReused }
    var protocolVersion: String { tls.protocolVersion }
    var cipherSuite: String? { tls.cipherSuite }
    /// What ALPN agreed on ("h2", "http/1.1"), or nil when the server chose nothing.
    var applicationProtocol: String? { tls.applicationProtocol }
    var verifiedChain: [Certificate] { tls.verifiedChain }
    /// When TCP connected and the handshake began, for metrics.
    private(set) var handshakeStartDate: Date?

    func startReading() {
        guard state != .closed, !readsWanted else { return }
        readsWanted = true
        tcp.startReading()
        // OpenSSL may hold decrypted bytes from before the pause; hand them over from the loop,
        // not from inside the caller's call.
        if state == .open { scheduleDrain() }
    }

    func stopReading() {
        guard state != .closed, readsWanted else { return }
        readsWanted = false
        // During the handshake TCP keeps reading: the handshake needs the bytes.
        if state == .open { tcp.stopReading() }
    }

    func write(_ bytes: UnsafeRawBufferPointer) -> TransportWriteOutcome {
        guard state == .open else { return .failed(UV_EPIPE.rawValue) }
        // OpenSSL refuses to encrypt only after a fatal alert; the owner closes on the failure.
        if tls.write(bytes) != nil { return .failed(UV_EPROTO.rawValue) }
        return sendOutput(forOwner: true)
    }

    func releaseIdleMemory() {
        guard state == .open else { return }
        tls.releaseBuffers()
        tcp.releaseIdleMemory()
    }

    func close(reset: Bool) {
        guard state != .closed else { return }
        // A clean close says close_notify, which keeps the session resumable. A reset does not:
        // the server should stop sending at once, and the session is not worth keeping.
        if !reset && state == .open {
            tls.shutdown()
            _ = sendOutput(forOwner: false)
        }
        state = .closed
        delegate = nil
        tcp.close(reset: reset)
    }

    // MARK: Internals

    /// Sends the ciphertext OpenSSL produced, through the loop's write scratch (no copy is
    /// made unless the socket leaves bytes over). Of several pieces, only the last one's
    /// completion is the owner's write's.
    private func sendOutput(forOwner: Bool) -> TransportWriteOutcome {
        var outcome = TransportWriteOutcome.written
        _ = tls.sendOutput(through: loop.writeScratch) { piece, isLast in
            switch tcp.write(piece) {
            case .written:
                return true
            case .pending:
                pendingWrites.append(forOwner && isLast)
                outcome = .pending
                return true
            case .failed(let code):
                outcome = .failed(code)
                return false
            }
        }
        return outcome
    }

    /// Sends what the handshake or a read produced; false when the socket failed (reported).
    private func flushTLSOutput() -> Bool {
        guard tls.hasOutput else { return true }
        if case .failed(let code) = sendOutput(forOwner: false) {
            failSocket(code)
            return false
        }
        return true
    }

    private func stepHandshake() {
        let step = tls.handshake()
        guard flushTLSOutput() else { return }
        switch step {
        case .complete:
            state = .open
            delegate?.transportDidConnect(self)
            // Bytes that came with the last handshake flight (a TLS 1.3 ticket, say) wait in
            // OpenSSL for the first read.
            if state == .open && !readsWanted { tcp.stopReading() }
        case .needsInput:
            break
        case .needsTrustDecision(let trust):
            state = .evaluating
            route.evaluateTrust(trust) { verdict in self.trustDecided(verdict) }
        case .failed(let error):
            route.sessions.clear()
            fail(.tls(error))
        }
    }

    private func trustDecided(_ verdict: TrustVerdict) {
        guard state == .evaluating else { return }
        state = .handshaking
        switch verdict {
        case .trusted(let chain):
            tls.decideTrust(accepted: true, verifiedChain: chain)
            stepHandshake()
        case .untrusted(let error):
            // Resuming with a refusal makes OpenSSL send the server a bad_certificate alert.
            tls.decideTrust(accepted: false, verifiedChain: [])
            _ = tls.handshake()
            _ = flushTLSOutput()
            route.sessions.clear()
            fail(.tls(.untrusted(error)))
        }
    }

    private func scheduleDrain() {
        guard !drainScheduled else { return }
        drainScheduled = true
        loop.runAfterIO {
            self.drainScheduled = false
            self.drainPlaintext()
        }
    }

    /// Decrypts and delivers while the owner wants reads; the owner may stop or close from
    /// inside any delivery. Records (16 KiB of plaintext each at most) are gathered until the
    /// loop's 64 KiB buffer is full or OpenSSL has no more, so a large body reaches the owner in
    /// the same 64 KiB pieces as over plain TCP, not four times as many.
    private func drainPlaintext() {
        let buffer = loop.readBuffer
        while state == .open && readsWanted && !reportedEnd {
            var filled = 0
            var ending: TLSConnection.ReadStep?
            while filled < buffer.count {
                let step = tls.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]))
                guard case .data(let count) = step else {
                    ending = step
                    break
                }
                filled += count
            }
            if filled > 0 {
                delegate?.transport(self, didRead: UnsafeRawBufferPointer(start: buffer.baseAddress, count: filled))
            }
            switch ending {
            case nil, .data?:
                // The buffer filled up: go round again (if the owner still wants reads).
                continue
            case .needsInput?:
                _ = flushTLSOutput()
                return
            case .ended(let cleanly)?:
                // Delivered only if the owner did not stop or close on the bytes above; a later
                // read after `startReading` finds the end again.
                guard state == .open && readsWanted && !reportedEnd else { return }
                reportedEnd = true
                _ = flushTLSOutput()
                delegate?.transportDidReadEOF(self, cleanly: cleanly)
                return
            case .failed(let error)?:
                guard state == .open else { return }
                _ = flushTLSOutput()
                fail(.tls(error))
                return
            }
        }
    }

    private func fail(_ error: TransportError) {
        guard state != .closed else { return }
        state = .closed
        defer { delegate = nil }
        tcp.close(reset: false)
        delegate?.transport(self, didFail: error)
    }

    private func failSocket(_ code: Int32) {
        guard state != .closed else { return }
        let wasConnecting = state != .open
        state = .closed
        defer { delegate = nil }
        tcp.close(reset: false)
        if wasConnecting {
            delegate?.transport(self, didFail: .tls(.socketFailedDuringHandshake(host: route.host, status: code)))
        } else {
            delegate?.transport(self, didFailWith: code)
        }
    }
}

extension TLSTransport: TransportDelegate {
    func transportDidConnect(_ transport: StreamTransport) {
        guard state == .connecting else { return }
        state = .handshaking
        handshakeStartDate = Date()
        tcp.startReading()
        stepHandshake()
    }

    func transport(_ transport: StreamTransport, didFailToConnect code: Int32) {
        guard state == .connecting else { return }
        // Not expected (TLS is made over a connected transport); passed on all the same.
        state = .closed
        defer { delegate = nil }
        tcp.close(reset: false)
        delegate?.transport(self, didFailToConnect: code)
    }

    func transport(_ transport: StreamTransport, didRead bytes: UnsafeRawBufferPointer) {
        tls.feed(bytes)
        switch state {
        case .handshaking: stepHandshake()
        case .open: drainPlaintext()
        // While the evaluation runs, bytes wait in OpenSSL's input.
        case .connecting, .evaluating, .closed: break
        }
    }

    func transportDidReadEOF(_ transport: StreamTransport, cleanly: Bool) {
        tcpEnded = true
        tls.markInputEOF()
        switch state {
        case .handshaking, .evaluating:
            route.sessions.clear()
            fail(.tls(.closedDuringHandshake(host: route.host)))
        case .open:
            // Reads stopped means TCP stopped too, so this EOF came while reading.
            drainPlaintext()
        case .connecting, .closed:
            break
        }
    }

    func transport(_ transport: StreamTransport, didFailWith code: Int32) {
        failSocket(code)
    }

    func transport(_ transport: StreamTransport, didFail error: TransportError) {
        fail(error)
    }

    func transportDidFinishWriting(_ transport: StreamTransport) {
        guard let forOwner = pendingWrites.popFirst() else { return }
        if forOwner && state == .open { delegate?.transportDidFinishWriting(self) }
    }
}
