/// Happy Eyeballs (RFC 8305): which of a host's addresses to try, and when, so that an address
/// that never answers (often a broken IPv6 path) costs a quarter of a second instead of the
/// whole connect timeout. Decided here without I/O: events in, actions out; `ConnectionRace`
/// performs them with sockets and a timer.
///
/// Attempts go in the order of `order(_:)`. The first starts at once; each later one starts
/// when the attempt before it has had `connectionAttemptDelayMilliseconds` to connect, or at
/// once when an attempt fails. The first attempt to connect wins and the others are closed;
/// when every attempt has failed, the race fails with the last failure. The overall limit is
/// not the machine's: the connection's connect timeout abandons the race (`abandon`).
struct HappyEyeballs {
    /// RFC 8305 §5's Connection Attempt Delay, at its recommended default of 250 ms: how long an
    /// attempt has before the next address is tried beside it.
    static let connectionAttemptDelayMilliseconds: UInt64 = 250

    /// Where one address's attempt stands.
    enum AttemptState: Equatable { case notStarted, connecting, failed, won, closed }

    /// What the shell does next.
    enum Action: Equatable {
        case none
        /// Connect to address `index`. With `armDelay`, (re)arm the timer for the attempt
        /// delay, after which `delayElapsed` starts the next address; without, disarm it: no
        /// address is left to start.
        case start(index: Int, armDelay: Bool)
        /// Attempt `index` connected: it is the connection. Close the attempts in `losers`
        /// (still connecting) and the timer.
        case succeed(index: Int, losers: [Int])
        /// Every attempt failed: fail with the last one's status. Close the timer.
        case fail(status: Int32)
    }

    /// One entry per address, in attempt order.
    private(set) var attempts: [AttemptState]
    /// The next address to start.
    private var next = 0
    /// Attempts started and not yet failed (or closed).
    private var connecting = 0
    private var lastStatus: Int32 = 0
    /// Won, failed or abandoned: every later event is ignored.
    private(set) var isFinished = false

    /// - Parameter addressCount: at least one.
    init(addressCount: Int) {
        precondition(addressCount > 0, "a race needs an address")
        attempts = Array(repeating: .notStarted, count: addressCount)
    }

    /// RFC 8305 §4: the addresses with their families interleaved, IPv6 first (a "First Address
    /// Family Count" of one), each family keeping the resolver's order. A host reached over one
    /// family only keeps its order.
    static func order(_ addresses: [SocketAddress]) -> [SocketAddress] {
        var v6: [SocketAddress] = []
        var v4: [SocketAddress] = []
        for address in addresses {
            if address.isIPv6 { v6.append(address) } else { v4.append(address) }
        }
        if v6.isEmpty || v4.isEmpty { return addresses }
        var ordered: [SocketAddress] = []
        ordered.reserveCapacity(addresses.count)
        for index in 0..<max(v6.count, v4.count) {
            if index < v6.count { ordered.append(v6[index]) }
            if index < v4.count { ordered.append(v4[index]) }
        }
        return ordered
    }

    /// Begins the race with the first address.
    mutating func start() -> Action {
        guard !isFinished, next == 0 else { return .none }
        return startNext()
    }

    /// The timer armed by a `start` action fired: the attempts in flight have had their time.
    mutating func delayElapsed() -> Action {
        guard !isFinished, next < attempts.count else { return .none }
        return startNext()
    }

    /// Attempt `index` connected.
    mutating func attemptConnected(_ index: Int) -> Action {
        guard !isFinished, attempts[index] == .connecting else { return .none }
        isFinished = true
        attempts[index] = .won
        var losers: [Int] = []
        for other in 0..<next where attempts[other] == .connecting {
            attempts[other] = .closed
            losers.append(other)
        }
        connecting = 0
        return .succeed(index: index, losers: losers)
    }

    /// Attempt `index` failed with `status` (a libuv error code).
    mutating func attemptFailed(_ index: Int, status: Int32) -> Action {
        guard !isFinished, attempts[index] == .connecting else { return .none }
        attempts[index] = .failed
        connecting -= 1
        lastStatus = status
        // The next address goes now, not after the delay: this one will not answer.
        if next < attempts.count { return startNext() }
        if connecting > 0 { return .none }
        isFinished = true
        return .fail(status: status)
    }

    /// The race is given up (the connect timeout, or the connection closed): returns the
    /// attempts still connecting, for the shell to close.
    mutating func abandon() -> [Int] {
        guard !isFinished else { return [] }
        isFinished = true
        var open: [Int] = []
        for index in 0..<next where attempts[index] == .connecting {
            attempts[index] = .closed
            open.append(index)
        }
        connecting = 0
        return open
    }

    private mutating func startNext() -> Action {
        let index = next
        next += 1
        attempts[index] = .connecting
        connecting += 1
        return .start(index: index, armDelay: next < attempts.count)
    }
}
