import Foundation
import Glibc

/// A scripted DNS server over UDP on loopback, for tests and benchmarks: it answers A and AAAA
/// questions from a table, each name with its own behaviour (addresses and TTL, a delay before
/// answering, NXDOMAIN, SERVFAIL, a truncated answer, or no answer at all), and counts the queries
/// per name. Names not in the table get NXDOMAIN. It has no TCP: its port is held for TCP without
/// listening, so a client's TCP retry is refused (ECONNREFUSED), as behind a firewall that lets
/// only UDP/53 through. One thread of its own, until `stop()`; every method is thread-safe.
public final class LoopbackDNSServer: @unchecked Sendable {
    /// What the server does with a question for one name.
    public struct Entry: Sendable {
        /// How it answers.
        public enum Behavior: Sendable {
            /// NOERROR with the entry's addresses of the asked family (none: a no-data answer).
            case answer
            /// NXDOMAIN: the name does not exist.
            case nameError
            /// SERVFAIL.
            case serverFailure
            /// No answer at all: the client times out.
            case silent
            /// NOERROR with the TC bit and no records: the answer did not fit in UDP, so the
            /// client must ask over TCP, which this server refuses.
            case truncated
        }

        /// IPv4 and IPv6 literals; A questions get the IPv4 ones, AAAA the IPv6 ones.
        public var addresses: [String]
        /// The records' TTL in seconds.
        public var ttl: UInt32
        /// Seconds to wait before answering.
        public var delay: Double
        public var behavior: Behavior

        /// An entry that answers with `addresses` after `delay` seconds.
        public init(addresses: [String] = [], ttl: UInt32 = 300, delay: Double = 0, behavior: Behavior = .answer) {
            self.addresses = addresses
            self.ttl = ttl
            self.delay = delay
            self.behavior = behavior
        }
    }

    private struct Delayed {
        var due: Double
        var bytes: [UInt8]
        var peer: sockaddr_storage
        var peerLength: socklen_t
    }

    private let lock = NSLock()
    private var table: [String: Entry] = [:]
    private var counts: [String: Int] = [:]
    private var total = 0
    private var stopping = false
    private let socket: Int32
    /// A TCP socket bound to `port` that never listens: connections to it are refused, and no
    /// other process can take the port's TCP side and answer in the server's place.
    private let refusingTCP: Int32
    private let stopped = DispatchSemaphore(value: 0)
    /// The UDP port it listens on.
    public let port: Int
    /// The address it listens on.
    public let host: String

    /// Binds `host:port` (port 0: any free one whose TCP side is free too) and starts answering.
    public init(host: String = "127.0.0.1", port: Int = 0) throws {
        var attempt = 0
        while true {
            let udp = try Self.bound(host: host, port: port, type: SOCK_DGRAM)
            let boundPort = udp.port
            // The same port for TCP, held without listen(2). With port 0, a port whose TCP side
            // another process holds is given back and another one taken; a port the caller named
            // is kept, its TCP side left to whoever holds it.
            if let tcp = try? Self.bound(host: host, port: boundPort, type: SOCK_STREAM) {
                self.refusingTCP = tcp.fd
            } else if port == 0 && attempt < 20 {
                close(udp.fd)
                attempt += 1
                continue
            } else {
                self.refusingTCP = -1
            }
            self.socket = udp.fd
            self.port = boundPort
            break
        }
        self.host = host
        let thread = Thread { [self] in serve() }
        thread.name = "LoopbackDNSServer"
        thread.start()
    }

    /// A socket of `type` bound to `host:port`, and the port it got.
    private static func bound(host: String, port: Int, type: __socket_type) throws -> (fd: Int32, port: Int) {
        let isIPv6 = host.contains(":")
        let fd = Glibc.socket(isIPv6 ? AF_INET6 : AF_INET, Int32(type.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        var storage = sockaddr_storage()
        var length: socklen_t
        if isIPv6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = in_port_t(UInt16(port).bigEndian)
            inet_pton(AF_INET6, host, &address.sin6_addr)
            withUnsafeBytes(of: address) { raw in withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: raw) } }
            length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            inet_pton(AF_INET, host, &address.sin_addr)
            withUnsafeBytes(of: address) { raw in withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: raw) } }
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
        }
        let bound = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0 else {
            let code = errno
            close(fd)
            throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EADDRINUSE)
        }
        _ = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        let boundPort = withUnsafeBytes(of: storage) { raw -> UInt16 in
            UInt16(bigEndian: raw.load(fromByteOffset: 2, as: UInt16.self))  // sin_port and sin6_port
        }
        return (fd, Int(boundPort))
    }

    /// Sets how `name` (case-insensitive, no final dot) is answered from now on.
    public func set(_ name: String, _ entry: Entry) {
        lock.withLock { table[name.lowercased()] = entry }
    }

    /// Queries received for `name` so far (A and AAAA count separately).
    public func queryCount(for name: String) -> Int {
        lock.withLock { counts[name.lowercased()] ?? 0 }
    }

    /// Queries received so far, for any name.
    public var totalQueries: Int { lock.withLock { total } }

    /// Stops answering and closes the socket; waits for the thread to end. Idempotent.
    public func stop() {
        let first = lock.withLock { () -> Bool in
            defer { stopping = true }
            return !stopping
        }
        guard first else { return }
        stopped.wait()
        close(socket)
        if refusingTCP >= 0 { close(refusingTCP) }
    }

    // MARK: The thread

    private func serve() {
        var delayed: [Delayed] = []
        var buffer = [UInt8](repeating: 0, count: 1500)
        while !lock.withLock({ stopping }) {
            let now = Self.now()
            // Send what is due, earliest first.
            delayed.sort { $0.due < $1.due }
            while let first = delayed.first, first.due <= now {
                send(first.bytes, to: first.peer, length: first.peerLength)
                delayed.removeFirst()
            }
            let wait = delayed.first.map { max(0, min(20, Int32(($0.due - now) * 1000) + 1)) } ?? 20
            var poller = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, wait) > 0 else { continue }
            var peer = sockaddr_storage()
            var peerLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let count = withUnsafeMutablePointer(to: &peer) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(socket, &buffer, buffer.count, 0, $0, &peerLength) }
            }
            guard count > 0, let question = DNSMessage.parseQuery(Array(buffer[0..<count])) else { continue }
            let entry = lock.withLock { () -> Entry? in
                total += 1
                counts[question.name, default: 0] += 1
                return table[question.name]
            }
            guard let reply = Self.reply(to: question, entry: entry) else { continue }
            let delay = entry?.delay ?? 0
            if delay > 0 {
                delayed.append(Delayed(due: now + delay, bytes: reply, peer: peer, peerLength: peerLength))
            } else {
                send(reply, to: peer, length: peerLength)
            }
        }
        stopped.signal()
    }

    /// The answer to `question` under `entry`; nil for silence.
    static func reply(to question: DNSMessage.Question, entry: Entry?) -> [UInt8]? {
        guard let entry else { return DNSMessage.response(to: question, rcode: 3, addresses: [], ttl: 0) }
        switch entry.behavior {
        case .silent: return nil
        case .nameError: return DNSMessage.response(to: question, rcode: 3, addresses: [], ttl: 0)
        case .serverFailure: return DNSMessage.response(to: question, rcode: 2, addresses: [], ttl: 0)
        case .truncated: return DNSMessage.response(to: question, rcode: 0, addresses: [], ttl: 0, truncated: true)
        case .answer:
            var records: [[UInt8]] = []
            for literal in entry.addresses {
                if question.type == DNSMessage.typeA, !literal.contains(":") {
                    var address = in_addr()
                    if inet_pton(AF_INET, literal, &address) == 1 { records.append(withUnsafeBytes(of: address) { Array($0) }) }
                } else if question.type == DNSMessage.typeAAAA, literal.contains(":") {
                    var address = in6_addr()
                    if inet_pton(AF_INET6, literal, &address) == 1 { records.append(withUnsafeBytes(of: address) { Array($0) }) }
                }
            }
            return DNSMessage.response(to: question, rcode: 0, addresses: records, ttl: entry.ttl)
        }
    }

    private func send(_ bytes: [UInt8], to peer: sockaddr_storage, length: socklen_t) {
        var peer = peer
        _ = withUnsafePointer(to: &peer) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(socket, bytes, bytes.count, 0, $0, length) }
        }
    }

    private static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
