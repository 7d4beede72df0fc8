import CAres
import CUV
import Glibc

/// Drives one c-ares channel from the loop: c-ares says which sockets it wants watched (its
/// socket-state callback), each gets a `uv_poll_t`, readiness goes to `ares_process_fd`, and one
/// timer wakes c-ares for its retransmissions and timeouts (`ares_timeout`). No thread: a slow
/// name waits on its own query, never in front of another.
///
/// c-ares opens its sockets through `AresSockets`, which sees a TCP connection to a server fail:
/// a look-up that c-ares ended only because that failure reset its server is asked once more
/// (`RefusedLookUp`), so one name whose truncated answer cannot be fetched over TCP fails alone
/// (issue #34).
///
/// Loop-confined once `attach` is called. Answers are handed out after the outermost c-ares call
/// returns, never from inside it: a caller may start a look-up or close the driver from its
/// completion, which c-ares does not allow within its callbacks.
final class AresDriver {
    /// A query's end: c-ares's status, the addresses (each with the asked port), the smallest
    /// TTL of the records (nil when there were none), and whether the status is the look-up's own
    /// TCP retry of a truncated answer failing to connect (`RefusedLookUp`).
    typealias Completion = (_ status: Int32, _ addresses: [SocketAddress], _ ttlSeconds: Int?, _ tcpRefused: Bool) -> Void

    private let loop: EventLoop
    private var channel: OpaquePointer?
    /// The channel's sockets; alive as long as the driver, so as long as the channel.
    private let sockets: AresSockets
    /// A poll handle per socket c-ares watches.
    private var polls: [Int32: UnsafeMutablePointer<uv_poll_t>] = [:]
    /// Made while queries are outstanding, closed when none is: an idle resolver holds no handle.
    private var timer: LoopTimer?
    private var outstanding = 0
    /// How deep in c-ares calls we are; answers wait in `deliveries` until it is back to 0.
    private var depth = 0
    private var deliveries: [() -> Void] = []
    private var closeRequested = false
    /// Close once no query is outstanding (`retire`).
    private var retiring = false

    init(loop: EventLoop) {
        self.loop = loop
        self.sockets = AresSockets(loop: loop)
    }

    /// What the channel's socket-state callback is given to find this driver.
    var callbackData: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    /// The callback to make the channel with (`AresChannel.make`).
    static let socketStateCallback: AresChannel.SocketStateCallback = { data, socket, readable, writable in
        Unmanaged<AresDriver>.fromOpaque(data!).takeUnretainedValue().socketStateChanged(socket, readable: readable != 0, writable: writable != 0)
    }

    /// Takes over a channel made with `callbackData` (on the loop, once).
    func attach(_ made: AresChannel) {
        loop.assertInLoop()
        guard !closeRequested else {
            ares_destroy(made.channel)
            return
        }
        channel = made.channel
        sockets.install(on: made.channel)
    }

    /// Queries A and AAAA for `host` at once (AF_UNSPEC), through resolv.conf's search list;
    /// c-ares orders the addresses by RFC 6724 (destination address selection).
    func getaddrinfo(host: String, port: Int, completion: @escaping Completion) {
        loop.assertInLoop()
        send(Query(driver: self, host: host, port: port, completion: completion))
    }

    /// Sends `query` (again, when `RefusedLookUp` says so).
    private func send(_ query: Query) {
        guard let channel, !closeRequested else {
            let completion = query.completion
            deliveries.append { completion(ARES_EDESTRUCTION, [], nil, false) }
            if depth == 0 { drain() }
            return
        }
        query.tcpFailuresAtStart = sockets.tcpFailures
        var hints = ares_addrinfo_hints()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        outstanding += 1
        enter()
        ares_getaddrinfo(channel, query.host, nil, &hints, { arg, status, _, result in
            let query = Unmanaged<Query>.fromOpaque(arg!).takeRetainedValue()
            query.driver.ended(query, status: status, result: result)
        }, Unmanaged.passRetained(query).toOpaque())
        leave()
    }

    /// Whether the driver is closed (its channel destroyed, its handles closing).
    var isClosed: Bool { closeRequested && channel == nil }

    /// Closes the driver once its outstanding queries have ended (a newer channel took its
    /// place: resolv.conf changed). Queries already sent finish on it.
    func retire() {
        loop.assertInLoop()
        retiring = true
        if depth == 0 && outstanding == 0 { close() }
    }

    /// Ends every query (their completions get ARES_EDESTRUCTION) and closes every handle. Safe
    /// from a completion: it takes effect once the current c-ares call has returned.
    func close() {
        loop.assertInLoop()
        closeRequested = true
        if depth == 0 { finishClose() }
    }

    private func finishClose() {
        if let channel {
            self.channel = nil
            enter()
            ares_destroy(channel)  // calls back every query, and closes its sockets (socketStateChanged)
            depth -= 1  // not leave(): that would come back here
            drain()
        }
        timer?.close()
        timer = nil
        for (_, poll) in polls { Self.close(poll) }
        polls.removeAll()
    }

    private func ended(_ query: Query, status: Int32, result: UnsafeMutablePointer<ares_addrinfo>?) {
        outstanding -= 1
        let step = RefusedLookUp.step(status: status, tcpFailures: sockets.tcpFailures - query.tcpFailuresAtStart,
                                      askedAgain: query.askedAgain)
        if step == .askAgain {
            if let result { ares_freeaddrinfo(result) }
            query.askedAgain = true
            // Not from within c-ares's callback: once the outermost call has returned.
            deliveries.append { [self] in send(query) }
            return
        }
        var addresses: [SocketAddress] = []
        var ttl: Int?
        var node = result?.pointee.nodes
        while let current = node {
            if let address = current.pointee.ai_addr, let socketAddress = SocketAddress(address, port: query.port),
               !addresses.contains(socketAddress) {
                addresses.append(socketAddress)
                ttl = min(ttl ?? Int.max, Int(current.pointee.ai_ttl))
            }
            node = current.pointee.ai_next
        }
        if let result { ares_freeaddrinfo(result) }
        let completion = query.completion
        let tcpRefused = step == .deliver(tcpRefused: true)
        deliveries.append { completion(status, addresses, ttl, tcpRefused) }
    }

    // MARK: Sockets and the timer

    private func socketStateChanged(_ socket: ares_socket_t, readable: Bool, writable: Bool) {
        guard readable || writable else {
            // c-ares closes the socket right after: stop polling it first.
            if let poll = polls.removeValue(forKey: socket) { Self.close(poll) }
            return
        }
        let poll: UnsafeMutablePointer<uv_poll_t>
        if let existing = polls[socket] {
            poll = existing
        } else {
            poll = .allocate(capacity: 1)
            guard uv_poll_init_socket(loop.uv, poll, socket) == 0 else {
                poll.deallocate()
                return  // c-ares times the query out
            }
            poll.pointee.data = callbackData
            polls[socket] = poll
        }
        let events = (readable ? Int32(UV_READABLE.rawValue) : 0) | (writable ? Int32(UV_WRITABLE.rawValue) : 0)
        uv_poll_start(poll, events) { poll, status, events in
            let driver = Unmanaged<AresDriver>.fromOpaque(poll!.pointee.data).takeUnretainedValue()
            var fd: uv_os_fd_t = -1
            poll!.withMemoryRebound(to: uv_handle_t.self, capacity: 1) { _ = uv_fileno($0, &fd) }
            // An error on the socket: let c-ares read and write, so that it sees it.
            let readable = status < 0 || events & Int32(UV_READABLE.rawValue) != 0
            let writable = status < 0 || events & Int32(UV_WRITABLE.rawValue) != 0
            driver.process(readable: readable ? fd : ARES_SOCKET_BAD, writable: writable ? fd : ARES_SOCKET_BAD)
        }
    }

    private func process(readable: ares_socket_t, writable: ares_socket_t) {
        guard let channel else { return }
        enter()
        ares_process_fd(channel, readable, writable)
        leave()
    }

    /// Arms the timer for c-ares's next timeout while queries are outstanding; closes it when
    /// none is.
    private func updateTimer() {
        guard let channel, outstanding > 0 else {
            timer?.close()
            timer = nil
            return
        }
        var next = timeval()
        guard ares_timeout(channel, nil, &next) != nil else { return }
        let milliseconds = UInt64(max(0, next.tv_sec)) * 1000 + UInt64(max(0, next.tv_usec) + 999) / 1000
        if timer == nil {
            timer = LoopTimer(loop: loop) { [unowned self] in
                self.process(readable: ARES_SOCKET_BAD, writable: ARES_SOCKET_BAD)
            }
        }
        timer!.arm(at: LoopDuration.deadline(LoopTimer.now(loop), plus: milliseconds))
    }

    // MARK: Re-entrancy

    private func enter() { depth += 1 }

    private func leave() {
        depth -= 1
        guard depth == 0 else { return }
        drain()
        if retiring && outstanding == 0 { closeRequested = true }
        if closeRequested { finishClose() } else { updateTimer() }
    }

    private func drain() {
        while !deliveries.isEmpty {
            let ready = deliveries
            deliveries.removeAll()
            for delivery in ready { delivery() }
        }
    }

    private static func close(_ poll: UnsafeMutablePointer<uv_poll_t>) {
        uv_poll_stop(poll)
        poll.withMemoryRebound(to: uv_handle_t.self, capacity: 1) { handle in
            uv_close(handle) { handle in
                handle!.withMemoryRebound(to: uv_poll_t.self, capacity: 1) { $0.deallocate() }
            }
        }
    }

    /// One look-up; c-ares holds it (retained) from each ares_getaddrinfo call until its
    /// callback. It holds the driver, so a driver with queries outstanding stays alive.
    private final class Query {
        let driver: AresDriver
        let host: String
        let port: Int
        let completion: Completion
        /// `AresSockets.tcpFailures` when it was last sent.
        var tcpFailuresAtStart = 0
        /// Whether it is on its second sending (`RefusedLookUp`).
        var askedAgain = false

        init(driver: AresDriver, host: String, port: Int, completion: @escaping Completion) {
            self.driver = driver
            self.host = host
            self.port = port
            self.completion = completion
        }
    }

    deinit {
        // Only reached with no query outstanding (each holds the driver), so no socket is open.
        if let channel { ares_destroy(channel) }
    }
}
