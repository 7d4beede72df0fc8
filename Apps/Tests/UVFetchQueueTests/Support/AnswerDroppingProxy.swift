import Foundation
import Glibc
import Synchronization

/// A TCP proxy on 127.0.0.1 in front of a PostgreSQL server that loses one answer: the
/// worker's first claim (its statement, with a claim limit above 0) reaches the server, which
/// runs and commits it; the proxy takes the server's whole answer, up to its ReadyForQuery
/// (sent once the implicit transaction has committed), and then closes both connections
/// instead of passing it on. The worker sees its connection lost, as after a network blip or
/// a failover, and never learns what the server did. Everything else is relayed as it is.
///
/// It reads the wire protocol only as far as it must: the client's messages (Parse, Bind,
/// Sync, Query) and the server's framing. Clients must not ask for TLS (`sslmode=disable`).
final class AnswerDroppingProxy: @unchecked Sendable {
    // @unchecked: the listener and the relays share only atomics and the lock-guarded list.

    /// The proxy's port on 127.0.0.1.
    let port: Int
    private let serverPort: Int
    private let marker: [UInt8]
    private let listener: Int32
    /// A pipe whose closing wakes the accepting thread and every relay to stop.
    private let stopPipe: (read: Int32, write: Int32)
    private let droppedCount = Atomic<Int>(0)
    private let dropArmed = Atomic<Bool>(true)
    private let finished = DispatchGroup()
    private let stopped = Atomic<Bool>(false)

    /// Answers dropped so far (at most one).
    var dropped: Int { droppedCount.load(ordering: .acquiring) }

    /// Listens on a free port of 127.0.0.1, relaying to `serverPort` there; the statement whose
    /// answer is dropped is the first whose SQL contains `marker` and whose third parameter
    /// (the worker's claim limit, an int8) is above 0.
    init(serverPort: Int, marker: String) throws {
        self.serverPort = serverPort
        self.marker = Array(marker.utf8)
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw ProxyError("pipe failed") }
        stopPipe = (fds[0], fds[1])
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = Self.loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0
            }
        }
        guard descriptor >= 0, bound, listen(descriptor, 16) == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            close(fds[0])
            close(fds[1])
            throw ProxyError("cannot listen on 127.0.0.1: \(reason)")
        }
        listener = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
        start { [self] in acceptConnections() }
    }

    deinit { stop() }

    /// `postgres://postgres@127.0.0.1:PORT/name?sslmode=disable` for the database of `url`.
    func url(for url: String) -> String {
        "postgres://postgres@127.0.0.1:\(port)/\(PostgresCluster.name(of: url))?sslmode=disable"
    }

    /// Stops accepting and closes every relay; waits for their threads.
    func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        close(stopPipe.write)
        finished.wait()
        close(listener)
        close(stopPipe.read)
    }

    private func start(_ body: @escaping @Sendable () -> Void) {
        finished.enter()
        let thread = Thread { [finished] in
            body()
            finished.leave()
        }
        thread.start()
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    private func acceptConnections() {
        while true {
            var fds = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0), pollfd(fd: stopPipe.read, events: Int16(POLLIN), revents: 0)]
            guard poll(&fds, 2, -1) >= 0 || errno == EINTR else { return }
            if fds[1].revents != 0 { return }
            guard fds[0].revents != 0 else { continue }
            let client = accept(listener, nil, nil)
            guard client >= 0 else { continue }
            let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.loopback(port: serverPort)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
            }
            guard connected else {
                close(client)
                close(server)
                continue
            }
            start { [self] in relay(client: client, server: server) }
        }
    }

    /// Relays one connection until either side closes it, the proxy stops, or the answer to
    /// drop has come whole.
    private func relay(client: Int32, server: Int32) {
        defer {
            close(client)
            close(server)
        }
        var state = RelayState()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            var fds = [pollfd(fd: client, events: Int16(POLLIN), revents: 0), pollfd(fd: server, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: stopPipe.read, events: Int16(POLLIN), revents: 0)]
            guard poll(&fds, 3, -1) >= 0 || errno == EINTR else { return }
            if fds[2].revents != 0 { return }
            if fds[0].revents != 0 {
                let count = read(client, &buffer, buffer.count)
                guard count > 0 else { return }
                let bytes = Array(buffer[..<count])
                // Read before it is passed on, so that the answer's fate is known before the
                // server can send it.
                state.fromClient(bytes, marker: marker) { [self] in
                    dropArmed.compareExchange(expected: true, desired: false, ordering: .acquiringAndReleasing).exchanged
                }
                guard Self.writeAll(bytes, to: server) else { return }
            }
            if fds[1].revents != 0 {
                let count = read(server, &buffer, buffer.count)
                guard count > 0 else { return }
                let (forward, dropNow) = state.fromServer(Array(buffer[..<count]))
                guard Self.writeAll(forward, to: client) else { return }
                if dropNow {
                    droppedCount.add(1, ordering: .releasing)
                    return
                }
            }
        }
    }

    private static func writeAll(_ bytes: [UInt8], to descriptor: Int32) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return false }
            offset += written
        }
        return true
    }
}

/// What a relay knows of its connection's protocol.
private struct RelayState {
    private var clientBytes: [UInt8] = []
    private var serverBytes: [UInt8] = []
    /// The startup message, which has no type byte, is still to come from the client.
    private var awaitingStartup = true
    /// The unnamed statement last parsed is the worker's.
    private var parsedMarker = false
    /// The client's messages since its last Sync are a claim whose answer is to be dropped.
    private var dropping = false
    /// One entry per answer the server owes (the startup's, each Sync's and Query's), in order:
    /// whether to drop it.
    private var answers: [Bool] = []

    /// Notes the client's complete messages in `bytes`.
    /// `takeDrop` says whether this claim is the one to drop (true once).
    mutating func fromClient(_ bytes: [UInt8], marker: [UInt8], takeDrop: () -> Bool) {
        clientBytes += bytes
        while true {
            if awaitingStartup {
                guard clientBytes.count >= 4 else { return }
                let length = Int(Self.int32(clientBytes, 0))
                guard clientBytes.count >= length else { return }
                clientBytes.removeFirst(length)
                awaitingStartup = false
                answers.append(false)
                continue
            }
            guard clientBytes.count >= 5 else { return }
            let length = Int(Self.int32(clientBytes, 1))
            guard clientBytes.count >= 1 + length else { return }
            let body = Array(clientBytes[5..<(1 + length)])
            switch clientBytes[0] {
            case UInt8(ascii: "P"):
                parsedMarker = Self.contains(body, marker)
            case UInt8(ascii: "B"):
                if parsedMarker, let limit = Self.thirdParameter(body), limit > 0, takeDrop() {
                    dropping = true
                }
            case UInt8(ascii: "S"):
                answers.append(dropping)
                dropping = false
            case UInt8(ascii: "Q"):
                answers.append(false)
            default:
                break
            }
            clientBytes.removeFirst(1 + length)
        }
    }

    /// The server's bytes to pass on now, and whether the answer to drop is now whole (then
    /// the connection is to be closed).
    mutating func fromServer(_ bytes: [UInt8]) -> (forward: [UInt8], drop: Bool) {
        serverBytes += bytes
        var forward: [UInt8] = []
        while serverBytes.count >= 5 {
            let length = Int(Self.int32(serverBytes, 1))
            guard serverBytes.count >= 1 + length else { break }
            let isReady = serverBytes[0] == UInt8(ascii: "Z")
            let dropThis = answers.first ?? false
            if !dropThis { forward += serverBytes[..<(1 + length)] }
            serverBytes.removeFirst(1 + length)
            if isReady {
                if !answers.isEmpty { answers.removeFirst() }
                if dropThis { return (forward, true) }
            }
        }
        return (forward, false)
    }

    private static func int32(_ bytes: [UInt8], _ at: Int) -> Int32 {
        Int32(bitPattern: UInt32(bytes[at]) << 24 | UInt32(bytes[at + 1]) << 16 | UInt32(bytes[at + 2]) << 8 | UInt32(bytes[at + 3]))
    }

    private static func contains(_ bytes: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, bytes.count >= needle.count else { return false }
        return (0...(bytes.count - needle.count)).contains { start in bytes[start..<(start + needle.count)].elementsEqual(needle) }
    }

    /// A Bind's third parameter as an integer (binary int4 or int8, or text), nil if absent.
    private static func thirdParameter(_ body: [UInt8]) -> Int64? {
        var at = 0
        // The portal's and the statement's names.
        for _ in 0..<2 {
            guard let end = body[at...].firstIndex(of: 0) else { return nil }
            at = end + 1
        }
        guard at + 2 <= body.count else { return nil }
        let formatCount = Int(UInt16(body[at]) << 8 | UInt16(body[at + 1]))
        let formats = (0..<formatCount).map { Int(UInt16(body[at + 2 + 2 * $0]) << 8 | UInt16(body[at + 3 + 2 * $0])) }
        at += 2 + 2 * formatCount
        guard at + 2 <= body.count else { return nil }
        let parameterCount = Int(UInt16(body[at]) << 8 | UInt16(body[at + 1]))
        at += 2
        guard parameterCount >= 3 else { return nil }
        for index in 0..<3 {
            guard at + 4 <= body.count else { return nil }
            let length = Int(int32(body, at))
            at += 4
            if index == 2 {
                guard length > 0, at + length <= body.count else { return nil }
                let value = body[at..<(at + length)]
                let binary = formatCount == 1 ? formats[0] == 1 : formatCount > 2 && formats[2] == 1
                if !binary { return Int64(String(decoding: value, as: UTF8.self)) }
                return value.reduce(Int64(0)) { $0 << 8 | Int64($1) }
            }
            at += max(0, length)
        }
        return nil
    }
}

struct ProxyError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
