/// What a `ConnectionRace` reports: exactly one of the two, on the loop thread, and nothing
/// after `cancel`.
protocol ConnectionRaceDelegate: AnyObject {
    /// `transport` connected to `address` (its delegate is still the race: the receiver sets
    /// its own, or the layer above's, and tells it that the TCP connection is up).
    func race(_ race: ConnectionRace, won transport: TCPTransport, to address: SocketAddress)
    /// Every address failed; `status` is the last failure's libuv code.
    func race(_ race: ConnectionRace, failedWith status: Int32)
}

/// The I/O shell of `HappyEyeballs`: TCP connects to a host's addresses, started and closed as
/// the machine says, the first to connect handed to the delegate. Only TCP races (RFC 8305
/// races connections, not handshakes): a proxy's CONNECT and TLS are layered over the winner.
///
/// Loop-confined. Holds its delegate until it reports or is cancelled; its attempts hold the
/// race (as their delegate) until each is closed or handed over. The delay timer exists only
/// when there is a second address to start.
final class ConnectionRace {
    private let loop: EventLoop
    /// In attempt order (`HappyEyeballs.order`).
    private let addresses: [SocketAddress]
    /// The interface each address's socket is bound to (cellular routing), in the same order;
    /// empty when none is.
    private let interfaces: [String?]
    private let delayMilliseconds: UInt64
    private var machine: HappyEyeballs
    /// One per address once started; nil before, and after it is closed or handed over.
    private var attempts: [TCPTransport?]
    /// The first attempt's transport, made by the caller (who keeps it as its transport while
    /// connecting), used when the first address starts.
    private var firstTransport: TCPTransport?
    /// The marking of every attempt's socket: the first transport's.
    private let firstServiceType: NetworkServiceType
    private var timer: LoopTimer?
    private var delegate: ConnectionRaceDelegate?

    /// - Parameters:
    ///   - addresses: the resolver's answer (at least one), in its order; the race reorders it.
    ///   - interfaces: empty, or for each of `addresses` the interface to bind its socket to.
    ///   - first: the unconnected transport for the first attempt.
    ///   - delayMilliseconds: the Connection Attempt Delay (tests shorten or lengthen it).
    init(loop: EventLoop, addresses: [SocketAddress], interfaces: [String?] = [], first: TCPTransport, delegate: ConnectionRaceDelegate,
         delayMilliseconds: UInt64 = HappyEyeballs.connectionAttemptDelayMilliseconds) {
        loop.assertInLoop()
        self.loop = loop
        let ordered = addresses.count > 1 ? HappyEyeballs.order(addresses) : addresses
        self.addresses = ordered
        if interfaces.isEmpty {
            self.interfaces = []
        } else {
            // Reordered with their addresses (a handful: the quadratic search costs nothing).
            var pairs = Array(zip(addresses, interfaces))
            self.interfaces = ordered.map { address in
                let index = pairs.firstIndex { $0.0 == address }!
                return pairs.remove(at: index).1
            }
        }
        self.delayMilliseconds = delayMilliseconds
        machine = HappyEyeballs(addressCount: addresses.count)
        attempts = Array(repeating: nil, count: addresses.count)
        firstTransport = first
        firstServiceType = first.serviceType
        self.delegate = delegate
    }

    /// The address the first attempt goes to.
    var firstAddress: SocketAddress { addresses[0] }

    func start() {
        perform(machine.start())
    }

    /// Closes every attempt and the timer; the delegate hears nothing more.
    func cancel() {
        for index in machine.abandon() { close(index) }
        finish()
    }

    private func perform(_ action: HappyEyeballs.Action) {
        switch action {
        case .none:
            break
        case .start(let index, let armDelay):
            if armDelay {
                if timer == nil { timer = LoopTimer(loop: loop) { [unowned self] in self.perform(self.machine.delayElapsed()) } }
                timer?.arm(at: LoopDuration.deadline(LoopTimer.now(loop), plus: delayMilliseconds))
            } else {
                timer?.disarm()
            }
            let transport: TCPTransport
            if index == 0, let first = firstTransport {
                transport = first
                firstTransport = nil
            } else {
                transport = TCPTransport(loop: loop, serviceType: firstServiceType)
            }
            transport.delegate = self
            attempts[index] = transport
            transport.connect(to: addresses[index], interface: interfaces.isEmpty ? nil : interfaces[index])
        case .succeed(let index, let losers):
            for loser in losers { close(loser) }
            let winner = attempts[index]!
            attempts[index] = nil
            let delegate = self.delegate
            finish()
            delegate?.race(self, won: winner, to: addresses[index])
        case .fail(let status):
            let delegate = self.delegate
            finish()
            delegate?.race(self, failedWith: status)
        }
    }

    private func close(_ index: Int) {
        attempts[index]?.close(reset: false)
        attempts[index] = nil
    }

    private func finish() {
        timer?.close()
        timer = nil
        delegate = nil
        // An unused first transport was never connected: its handle still needs closing.
        firstTransport?.close(reset: false)
        firstTransport = nil
    }

    private func index(of transport: StreamTransport) -> Int? {
        attempts.firstIndex { $0 === transport }
    }
}

extension ConnectionRace: TransportDelegate {
    func transportDidConnect(_ transport: StreamTransport) {
        guard let index = index(of: transport) else { return }
        perform(machine.attemptConnected(index))
    }

    func transport(_ transport: StreamTransport, didFailToConnect code: Int32) {
        guard let index = index(of: transport) else { return }
        // A failed connect leaves the socket unusable.
        close(index)
        perform(machine.attemptFailed(index, status: code))
    }

    // Nothing is read or written before the race is won.
    func transport(_ transport: StreamTransport, didRead bytes: UnsafeRawBufferPointer) {}
    func transportDidReadEOF(_ transport: StreamTransport, cleanly: Bool) {}
    func transport(_ transport: StreamTransport, didFailWith code: Int32) {}
    func transport(_ transport: StreamTransport, didFail error: TransportError) {}
    func transportDidFinishWriting(_ transport: StreamTransport) {}
}
