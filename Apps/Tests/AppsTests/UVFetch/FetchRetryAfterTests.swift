import Foundation
import Synchronization
import Testing
import UVFetchCore

/// `--retries` as crawlers need it: 408, 429 and the passing 5xx go again, after the server's
/// Retry-After, which holds that host's other URLs too while other hosts go on.
@Suite(.tags(.childProcess), .serialized) struct FetchRetryAfterTests {
    /// When each request arrived, by path, on one server.
    private final class Arrivals: Sendable {
        private let table = Mutex<[(path: String, at: Double)]>([])
        func add(_ path: String) { table.withLock { $0.append((path, Self.now())) } }
        var all: [(path: String, at: Double)] { table.withLock { $0 } }
        static func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }
    }

    /// A server that answers a path's first request with `first` (a status and its fields) and
    /// every later one with a 200.
    private static func server(_ arrivals: Arrivals, first: @escaping @Sendable (String) -> (Int, [(String, String)])?) throws -> ScriptedServer {
        let seen = Mutex<Set<String>>([])
        return try ScriptedServer { connection in
            while let request = try? connection.readRequest(timeout: 10) {
                arrivals.add(request.target)
                let isFirst = seen.withLock { $0.insert(request.target).inserted }
                if isFirst, let (status, fields) = first(request.target) {
                    try connection.write(ScriptedResponse.text("later", status: status, reason: "Later", headers: fields))
                } else {
                    try connection.write(ScriptedResponse.text("ok \(request.target)"))
                }
            }
        }
    }

    private static func records(_ text: String) -> [String: [String: Any]] {
        var byPath: [String: [String: Any]] = [:]
        for line in text.split(separator: "\n") {
            guard let record = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let url = record["url"] as? String, let parsed = URL(string: url) else { continue }
            byPath["\(parsed.port ?? 0)\(parsed.path)"] = record
        }
        return byPath
    }

    @Test func aRetryAfterHoldsItsHostWhileOtherHostsGoOn() throws {
        let slowArrivals = Arrivals(), otherArrivals = Arrivals()
        let slow = try Self.server(slowArrivals) { $0 == "/a1" ? (429, [("Retry-After", "1")]) : nil }
        defer { slow.stop() }
        let other = try Self.server(otherArrivals) { _ in nil }
        defer { other.stop() }
        let a = "http://127.0.0.1:\(slow.port)", b = "http://127.0.0.1:\(other.port)"
        let urls = ["\(a)/a1", "\(a)/a2", "\(a)/a3", "\(b)/b1", "\(b)/b2", "\(b)/b3"]
        let result = try runUVFetch(["--concurrency", "1", "--retries", "2", "--jsonl", "-"] + urls)
        #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
        let records = Self.records(result.stdout)
        #expect(records.count == 6)
        #expect(records["\(slow.port)/a1"]?["attempts"] as? Int == 2)
        #expect(records["\(slow.port)/a1"]?["status"] as? Int == 200)

        let slowSeen = slowArrivals.all
        // a1, then (after the hold) a1 again first, then a2 and a3.
        #expect(slowSeen.map(\.path) == ["/a1", "/a1", "/a2", "/a3"], "\(slowSeen)")
        let told = try #require(slowSeen.first?.at)
        for later in slowSeen.dropFirst() {
            // Within a little of a second: the client's clock starts as the answer arrives.
            #expect(later.at - told >= 0.95, "\(later.path) came \(later.at - told) s after the 429")
        }
        // The other host did not wait: all of it went while the first was held.
        let otherSeen = otherArrivals.all
        #expect(otherSeen.count == 3)
        #expect(otherSeen.allSatisfy { $0.at < slowSeen[1].at }, "\(otherSeen) \(slowSeen)")
    }

    @Test func aLongerRetryAfterThanAllowedEndsTheURLWithItsStatus() throws {
        let arrivals = Arrivals()
        let server = try Self.server(arrivals) { _ in (503, [("Retry-After", "120")]) }
        defer { server.stop() }
        let started = Arrivals.now()
        let result = try runUVFetch(["--retries", "3", "--retry-max-wait", "1", "--jsonl", "-", "http://127.0.0.1:\(server.port)/x"])
        #expect(result.status == 1)
        #expect(Arrivals.now() - started < 60, "it waited for the Retry-After")
        let record = Self.records(result.stdout)["\(server.port)/x"]
        #expect(record?["status"] as? Int == 503)
        #expect(record?["attempts"] as? Int == 1)
        #expect(arrivals.all.count == 1)
    }

    /// Each status that says "try later" goes again (with the usual backoff when no
    /// Retry-After says how long); others, and POST whatever the status, do not.
    @Test func theStatusesThatAreRetried() throws {
        let arrivals = Arrivals()
        let server = try Self.server(arrivals) { path in
            path.hasPrefix("/post") ? (429, []) : Int(path.dropFirst()).map { ($0, []) }
        }
        defer { server.stop() }
        let base = "http://127.0.0.1:\(server.port)"
        let result = try runUVFetch(["--retries", "1", "--jsonl", "-"] + [408, 429, 500, 502, 503, 504, 404, 501].map { "\(base)/\($0)" })
        let records = Self.records(result.stdout)
        for status in [408, 429, 500, 502, 503, 504] {
            #expect(records["\(server.port)/\(status)"]?["attempts"] as? Int == 2, "\(status)")
            #expect(records["\(server.port)/\(status)"]?["status"] as? Int == 200, "\(status)")
        }
        for status in [404, 501] {
            #expect(records["\(server.port)/\(status)"]?["attempts"] as? Int == 1, "\(status)")
        }
        let posted = try runUVFetch(["--retries", "3", "-X", "POST", "--jsonl", "-", "\(base)/post-429"])
        let record = Self.records(posted.stdout)["\(server.port)/post-429"]
        #expect(record?["attempts"] as? Int == 1)
        #expect(record?["status"] as? Int == 429)
    }
}
