import Foundation
import Synchronization

/// Serves one curl test's replies the way curl's test server (sws) does, on a `ScriptedServer`:
///
/// - the part is the number after the last `/` of the request target (non-digits skipped):
///   above 10000 the part is that number modulo 10000, else part 0 (`data`);
/// - `%HTTPPORT` in a reply becomes the server's port;
/// - a reply is written in pieces of at most 200 bytes, so the client reads it in pieces;
/// - after a reply that contains `swsclose`, or an empty or missing one, the connection is
///   closed; otherwise the server waits for the next request on it;
/// - `wait N` after the reply (the test's postcmd) delays that by N seconds;
/// - after a reply that contains `swsbounce`, the next request gets the part after the one
///   just served.
final class CurlReplyServer: Sendable {
    /// What the connections' scripts share.
    private final class State: Sendable {
        /// The part served last, and whether it asked for a bounce.
        let bounce = Mutex<(lastPart: Int, pending: Bool)>((0, false))
        /// The server's port, known once it listens (no request can arrive before).
        let port = Atomic<Int>(0)
    }

    private let server: ScriptedServer

    var port: Int { server.port }

    init(_ testCase: CurlReplyCorpus.Case, replies: [Int: [UInt8]]) throws {
        let state = State()
        let alwaysCloses = testCase.serverAlwaysCloses
        let wait = testCase.waitAfterReply
        server = try ScriptedServer { connection in
            let port = state.port.load(ordering: .acquiring)
            while true {
                guard let request = try? connection.readRequest(timeout: 30) else { return }
                let requested = Self.part(of: request.target)
                let part = state.bounce.withLock { state -> Int in
                    let part = state.pending ? state.lastPart + 1 : requested
                    state.lastPart = part
                    return part
                }
                let reply = replies[part].map { Self.substitutingPort($0, port: port) } ?? []
                state.bounce.withLock { $0.pending = Self.contains(reply, "swsbounce") }
                var offset = 0
                while offset < reply.count {
                    let end = min(reply.count, offset + 200)
                    try connection.write(Array(reply[offset..<end]))
                    offset = end
                }
                if wait > 0 { connection.pause(wait) }
                if reply.isEmpty || alwaysCloses || Self.contains(reply, "swsclose") {
                    connection.close()
                    return
                }
            }
        }
        state.port.store(server.port, ordering: .releasing)
    }

    func stop() { server.stop() }

    /// sws's rule: the digits after the last `/`, non-digits skipped; above 10000, modulo 10000.
    static func part(of target: String) -> Int {
        guard let slash = target.lastIndex(of: "/") else { return 0 }
        let digits = target[target.index(after: slash)...].drop { !$0.isASCII || !$0.isNumber }.prefix { $0.isASCII && $0.isNumber }
        guard let number = Int(digits.prefix(9)) else { return 0 }
        return number > 10000 ? number % 10000 : 0
    }

    private static func substitutingPort(_ reply: [UInt8], port: Int) -> [UInt8] {
        let token = Array("%HTTPPORT".utf8)
        let replacement = Array(String(port).utf8)
        var result: [UInt8] = []
        result.reserveCapacity(reply.count)
        var index = 0
        while index < reply.count {
            if reply[index] == token[0], index + token.count <= reply.count, Array(reply[index..<index + token.count]) == token {
                result += replacement
                index += token.count
            } else {
                result.append(reply[index])
                index += 1
            }
        }
        return result
    }

    private static func contains(_ bytes: [UInt8], _ word: String) -> Bool {
        let needle = Array(word.utf8)
        guard bytes.count >= needle.count else { return false }
        for start in 0...(bytes.count - needle.count) where bytes[start] == needle[0] {
            if Array(bytes[start..<start + needle.count]) == needle { return true }
        }
        return false
    }
}
