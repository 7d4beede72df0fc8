import Foundation

/// What a `TransportConnector` reports: exactly one of the two, on the loop thread, and nothing
/// after `cancel`.
protocol TransportConnectorDelegate: AnyObject {
    /// The stack is up (TCP, a proxy's tunnel, TLS with the server trusted). `transport` reads
    /// nothing until its new owner makes itself the delegate and starts reading; bytes that came
    /// with the handshake wait in it. `applicationProtocol` is ALPN's answer (nil without TLS or
    /// when the server chose none).
    func connector(_ connector: TransportConnector, established transport: StreamTransport, applicationProtocol: String?)
    func connector(_ connector: TransportConnector, failed failure: ConnectFailure)
}

/// Establishes the byte stream a connection runs on: resolves the host, races TCP connects to
/// its addresses (`ConnectionRace`), then layers a proxy's CONNECT tunnel and TLS over the
/// winner, all within the connect timeout. It knows nothing of HTTP: the pool hands what it
/// establishes to the protocol driver that ALPN (or the session's settings) chose.
///
/// Loop-confined. Holds its delegate strongly until it reports or is cancelled.
final class TransportConnector {
    /// The pool's number for the connection being opened.
    let id: Int
    private let loop: EventLoop
    @exclusivity(unchecked) private var delegate: TransportConnectorDelegate?
    private let host: String
    private let port: Int
    private let resolver: DNSResolver
    private let tls: TLSRoute?
    private let tunnel: TunnelRoute?
    private let timeoutMilliseconds: UInt64
    private let serviceType: NetworkServiceType
    /// For an origin that refuses cellular: how its addresses are screened before connecting.
    private let cellular: CellularScreen?
    @exclusivity(unchecked) private var timer: LoopTimer?
    @exclusivity(unchecked) private var race: ConnectionRace?
    /// The first attempt's TCP transport until the race starts, then the stack over the winner.
    @exclusivity(unchecked) private var transport: StreamTransport?
    @exclusivity(unchecked) private(set) var timings = ConnectTimings()
    @exclusivity(unchecked) private var isDone = false

    /// - Parameters:
    ///   - host, port: where to connect: the origin, or the proxy in front of it.
    ///   - cellular: for an origin that refuses cellular, the screen its addresses pass.
    init(id: Int, loop: EventLoop, delegate: TransportConnectorDelegate, host: String, port: Int, tls: TLSRoute?, tunnel: TunnelRoute?,
         resolver: DNSResolver, connectTimeout: Double, serviceType: NetworkServiceType = .default, cellular: CellularScreen? = nil) {
        loop.assertInLoop()
        self.id = id
        self.loop = loop
        self.delegate = delegate
        self.host = host
        self.port = port
        self.resolver = resolver
        self.tls = tls
        self.tunnel = tunnel
        self.timeoutMilliseconds = LoopDuration.timeout(connectTimeout)
        self.serviceType = serviceType
        self.cellular = cellular
    }

    /// The TLS layer once TCP is up, while the handshake runs (tests watch it).
    var tlsTransport: TLSTransport? { transport as? TLSTransport }

    /// Resolves and connects; reports once.
    func start() {
        let timer = LoopTimer(loop: loop) { [unowned self] in
            self.fail(.timedOut(host: self.host, port: self.port, milliseconds: self.timeoutMilliseconds, tls: self.tls != nil))
        }
        self.timer = timer
        timer.arm(at: LoopDuration.deadline(LoopTimer.now(loop), plus: timeoutMilliseconds))
        // The closure holds the connector strongly until it runs (uv_run returns only once every
        // look-up has called back); a connector finished meanwhile ignores it. A weak capture
        // would give the connector a side table.
        timings.domainLookupStart = Date()
        resolver.resolve(host: host, port: port) { result in
            guard !self.isDone else { return }
            switch result {
            case .success(let addresses):
                let now = Date()
                self.timings.domainLookupEnd = now
                self.timings.connectStart = now
                guard !addresses.isEmpty else {
                    self.fail(.transport(.noAddresses(host: self.host)))
                    return
                }
                if let cellular = self.cellular {
                    self.screen(addresses, with: cellular)
                } else {
                    self.race(addresses, interfaces: [])
                }
            case .failure(let error):
                self.fail(.transport(error))
            }
        }
    }

    /// Races TCP connects to `addresses`, each bound to its interface in `interfaces` (none
    /// when empty).
    private func race(_ addresses: [SocketAddress], interfaces: [String?]) {
        let race = ConnectionRace(loop: loop, addresses: addresses, interfaces: interfaces,
                                  first: TCPTransport(loop: loop, serviceType: serviceType), delegate: self)
        self.race = race
        timings.remote = race.firstAddress
        race.start()
    }

    /// Keeps the connection off cellular interfaces (`CellularScreen`), then races what is
    /// left. The connect timeout runs meanwhile. Like the look-up's closure, the screen's holds
    /// the connector until it runs; a connector finished meanwhile ignores it.
    private func screen(_ addresses: [SocketAddress], with cellular: CellularScreen) {
        cellular.screen(addresses, loop: loop) { outcome in
            guard !self.isDone else { return }
            switch outcome {
            case .connect(let kept, let interfaces):
                self.race(kept, interfaces: interfaces)
            case .denied(let reason):
                self.fail(.transport(.cellularAccessDenied(host: self.host, reason: reason)))
            }
        }
    }

    /// Stops connecting and closes what was opened; the delegate hears nothing.
    func cancel() {
        guard !isDone else { return }
        finish()
        transport?.close(reset: false)
        transport = nil
    }

    private func finish() {
        isDone = true
        delegate = nil
        timer?.close()
        timer = nil
        if let race {
            self.race = nil
            race.cancel()
        }
    }

    private func fail(_ failure: ConnectFailure) {
        guard !isDone, let delegate else { return }
        finish()
        transport?.close(reset: false)
        transport = nil
        delegate.connector(self, failed: failure)
    }

    /// Over the connected TCP transport: a CONNECT tunnel through a proxy if there is one; then
    /// TLS for https. Each layer makes itself its lower transport's delegate.
    private static func layers(loop: EventLoop, over tcp: TCPTransport, tls: TLSRoute?, tunnel: TunnelRoute?) throws(TLSError) -> StreamTransport {
        var transport: StreamTransport = tcp
        if let tunnel {
            transport = TunnelTransport(over: transport, authority: tunnel.authority, authorization: tunnel.authorization)
        }
        guard let tls else { return transport }
        return try TLSTransport(loop: loop, route: tls, over: transport)
    }
}

extension TransportConnector: ConnectionRaceDelegate {
    func race(_ race: ConnectionRace, won tcp: TCPTransport, to address: SocketAddress) {
        self.race = nil
        timings.remote = address
        let stack: StreamTransport
        do {
            stack = try Self.layers(loop: loop, over: tcp, tls: tls, tunnel: tunnel)
        } catch {
            tcp.close(reset: false)
            fail(.transport(.tls(error)))
            return
        }
        transport = stack
        // The top of the stack reports here (plain TCP: TCP itself; else each layer above made
        // itself its lower one's delegate).
        stack.delegate = self
        // TCP is up: the layers above start (the tunnel's CONNECT, the TLS handshake) or, for
        // plain TCP, the transport is established.
        tcp.delegate?.transportDidConnect(tcp)
    }

    func race(_ race: ConnectionRace, failedWith status: Int32) {
        self.race = nil
        fail(.refused(host: host, port: port, status: status))
    }
}

extension TransportConnector: TransportDelegate {
    func transportDidConnect(_ transport: StreamTransport) {
        guard !isDone, let delegate else { return }
        let now = Date()
        let tlsTransport = transport as? TLSTransport
        if let tlsTransport, let handshakeStart = tlsTransport.handshakeStartDate {
            timings.connectEnd = handshakeStart
            timings.secureConnectionStart = handshakeStart
            timings.secureConnectionEnd = now
        } else {
            timings.connectEnd = now
        }
        finish()
        self.transport = nil
        transport.delegate = nil
        delegate.connector(self, established: transport, applicationProtocol: tlsTransport?.applicationProtocol)
    }

    func transport(_ transport: StreamTransport, didFailToConnect code: Int32) {
        // The race connects TCP; a layer above never reports this over a connected socket.
        fail(.refused(host: host, port: port, status: code))
    }

    func transport(_ transport: StreamTransport, didRead bytes: UnsafeRawBufferPointer) {
        // Nothing reads before the transport is handed over.
    }

    func transportDidReadEOF(_ transport: StreamTransport, cleanly: Bool) {
        fail(.closed)
    }

    func transport(_ transport: StreamTransport, didFailWith code: Int32) {
        fail(.socketFailed(status: code))
    }

    func transport(_ transport: StreamTransport, didFail error: TransportError) {
        fail(.transport(error))
    }

    func transportDidFinishWriting(_ transport: StreamTransport) {}
}

/// When each phase of opening a connection happened, and to which address: what a
/// transaction's metrics report. Kept by the connection for as long as it lives, so compact.
struct ConnectTimings {
    @CompactDate var domainLookupStart: Date? = nil
    @CompactDate var domainLookupEnd: Date? = nil
    @CompactDate var connectStart: Date? = nil
    @CompactDate var connectEnd: Date? = nil
    @CompactDate var secureConnectionStart: Date? = nil
    @CompactDate var secureConnectionEnd: Date? = nil
    var remote: SocketAddress? { didSet { remoteText = nil } }
    /// `remote` as text, made once per connection (`remoteAddressText`): every exchange on the
    /// connection reports the same one (metrics, WARC captures), and formatting it cost more than
    /// the rest of an exchange's metrics together.
    private var remoteText: String?

    /// The remote address as text ("127.0.0.1"), made on first use.
    mutating func remoteAddressText() -> String? {
        if remoteText == nil, let remote { remoteText = remote.ipAddress }
        return remoteText
    }
}
