import Foundation
import Synchronization
import Testing
import UVFetchCore

/// `--robots` against scripted origins: robots.txt fetched once per origin before its pages,
/// with -A's User-Agent; disallowed URLs recorded unrequested; Crawl-delay kept; the fetch's
/// outcomes read as RFC 9309 §2.3.1 says.
@Suite(.tags(.childProcess), .serialized) struct FetchRobotsTests {
    /// Every request one server got: path, User-Agent, arrival (uptime seconds).
    private final class Requests: Sendable {
        private let table = Mutex<[(path: String, userAgent: String?, at: Double)]>([])
        func add(_ request: ScriptedRequest) {
            let agent = request.headers.first { $0.0.lowercased() == "user-agent" }?.1
            table.withLock { $0.append((request.target, agent, Double(DispatchTime.now().uptimeNanoseconds) / 1e9)) }
        }
        var all: [(path: String, userAgent: String?, at: Double)] { table.withLock { $0 } }
        var pages: [(path: String, userAgent: String?, at: Double)] { all.filter { $0.path != "/robots.txt" } }
        var robotsFetches: Int { all.filter { $0.path == "/robots.txt" }.count }
    }

    /// A server whose /robots.txt answers `robots` (a whole response), every other path a 200.
    private static func origin(_ requests: Requests, robots: @escaping @Sendable () -> String) throws -> ScriptedServer {
        try ScriptedServer { connection in
            while let request = try? connection.readRequest(timeout: 10) {
                requests.add(request)
                try connection.write(request.target == "/robots.txt" ? robots() : ScriptedResponse.text("page \(request.target)"))
            }
        }
    }

    private static func records(_ text: String) -> [String: [String: Any]] {
        var byPath: [String: [String: Any]] = [:]
        for line in text.split(separator: "\n") {
            guard let record = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let url = record["url"] as? String, let parsed = URL(string: url) else { continue }
            byPath[parsed.path] = record
        }
        return byPath
    }

    private static let file = """
        # Our crawler may see the public pages and one private one, slowly.
        User-agent: uvfetch
        Disallow: /private
        Allow: /private/ok
        Crawl-delay: 0.3

        User-agent: *
        Disallow: /
        """

    @Test func disallowedURLsAreRecordedUnrequestedAndCrawlDelayIsKept() throws {
        let requests = Requests()
        let server = try Self.origin(requests) { ScriptedResponse.text(Self.file) }
        defer { server.stop() }
        let base = "http://127.0.0.1:\(server.port)"
        let paths = ["/public/1", "/private/x", "/private/ok", "/public/2", "/private"]
        let result = try runUVFetch(["--robots", "--concurrency", "8", "--jsonl", "-"] + paths.map { base + $0 })
        #expect(result.status == 1, "a disallowed URL is not fetched: \(result.stderr)")
        let records = Self.records(result.stdout)
        #expect(records.count == paths.count)
        for path in ["/private/x", "/private"] {
            let record = try #require(records[path])
            let error = record["error"] as? [String: Any]
            #expect(error?["kind"] as? String == "robots")
            #expect(error?["code"] as? String == "disallowedByRobots")
            #expect(record["status"] is NSNull)
            #expect(record["attempts"] as? Int == 0)
        }
        for path in ["/public/1", "/private/ok", "/public/2"] { #expect(records[path]?["status"] as? Int == 200, "\(path)") }

        let all = requests.all
        #expect(all.first?.path == "/robots.txt", "robots.txt before any page: \(all.map(\.path))")
        #expect(requests.robotsFetches == 1)
        #expect(Set(requests.pages.map(\.path)) == ["/public/1", "/private/ok", "/public/2"])
        // -A's default, on the robots.txt fetch and every page.
        #expect(all.allSatisfy { $0.userAgent == "uvfetch" }, "\(all.map(\.userAgent))")
        // The Crawl-delay spaces the pages, though eight could go at once.
        let times = requests.pages.map(\.at)
        for (earlier, later) in zip(times, times.dropFirst()) {
            #expect(later - earlier >= 0.28, "pages \(later - earlier) s apart")
        }
    }

    /// The token is -A's value up to the first `/` or space, matched whole and regardless of
    /// case: "UVFetch/2.0" is in the uvfetch group, "uvfetchbot" is not (the * group: nothing).
    @Test func theProductTokenComesFromTheUserAgent() throws {
        let requests = Requests()
        let server = try Self.origin(requests) { ScriptedResponse.text(Self.file) }
        defer { server.stop() }
        let url = "http://127.0.0.1:\(server.port)/public/1"
        let matching = try runUVFetch(["--robots", "-A", "UVFetch/2.0 (+https://example.test/bot)", "--jsonl", "-", url])
        #expect(matching.status == 0, "\(matching.stdout)")
        #expect(requests.all.allSatisfy { $0.userAgent == "UVFetch/2.0 (+https://example.test/bot)" })

        let other = try runUVFetch(["--robots", "-A", "uvfetchbot/1", "--jsonl", "-", url])
        #expect(other.status == 1)
        #expect((Self.records(other.stdout)["/public/1"]?["error"] as? [String: Any])?["code"] as? String == "disallowedByRobots")
        #expect(requests.robotsFetches == 2, "once per run")
        #expect(requests.pages.count == 1)
    }

    /// With --warc the robots.txt fetch is archived as it happened (a request and a response
    /// record, no --jsonl record of its own), beside the pages'.
    @Test func theRobotsFetchIsArchived() throws {
        let requests = Requests()
        let server = try Self.origin(requests) { ScriptedResponse.text(Self.file) }
        defer { server.stop() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("robots-warc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let warc = directory.appendingPathComponent("crawl.warc")
        let base = "http://127.0.0.1:\(server.port)"
        let result = try runUVFetch(["--robots", "--warc", warc.path, "--jsonl", "-", base + "/public/1", base + "/private/x"])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(Self.records(result.stdout).keys.sorted() == ["/private/x", "/public/1"])
        let archive = try runShell(#"zcat "$D/crawl.warc""#, in: directory).stdout
        let targets = archive.components(separatedBy: "\r\n").filter { $0.hasPrefix("WARC-Target-URI: ") }
        #expect(targets.filter { $0.hasSuffix("/robots.txt") }.count == 2, "its request and response: \(targets)")
        #expect(targets.filter { $0.hasSuffix("/public/1") }.count == 2)
        #expect(!targets.contains { $0.hasSuffix("/private/x") }, "a disallowed URL has no exchange")
        #expect(archive.contains("Disallow: /private"), "the file as served")
    }

    /// RFC 9309 §2.3.1: 4xx (401 and 403 too) allows everything, 5xx disallows everything.
    @Test(arguments: [(404, true), (401, true), (403, true), (410, true), (500, false), (503, false)])
    func theRobotsStatusDecides(status: Int, allowed: Bool) throws {
        let requests = Requests()
        let server = try Self.origin(requests) { ScriptedResponse.text("User-agent: *\nDisallow: /\n", status: status, reason: "X") }
        defer { server.stop() }
        let result = try runUVFetch(["--robots", "--jsonl", "-", "http://127.0.0.1:\(server.port)/page"])
        #expect(result.status == (allowed ? 0 : 1), "\(status): \(result.stdout)")
        #expect(requests.pages.count == (allowed ? 1 : 0))
    }

    /// No answer at all (the connection refused) is unreachable: nothing of that origin.
    @Test func anUnreachableRobotsDisallowsEverything() throws {
        let requests = Requests()
        let server = try ScriptedServer { connection in
            guard let request = try? connection.readRequest() else { return }
            requests.add(request)
            // robots.txt: closed without an answer; pages would be answered.
            if request.target == "/robots.txt" { return connection.close() }
            try connection.write(ScriptedResponse.text("page"))
        }
        defer { server.stop() }
        let result = try runUVFetch(["--robots", "--jsonl", "-", "http://127.0.0.1:\(server.port)/page"])
        #expect(result.status == 1)
        #expect(requests.pages.isEmpty)
        #expect((Self.records(result.stdout)["/page"]?["error"] as? [String: Any])?["kind"] as? String == "robots")
    }

    /// Redirects are followed across origins (up to five hops); the rules found there apply
    /// to the origin asked; more hops count as unavailable (everything allowed).
    @Test func redirectsAreFollowedAcrossOriginsUpToFive() throws {
        let elsewhere = Requests()
        let target = try Self.origin(elsewhere) { ScriptedResponse.text("User-agent: *\nDisallow: /secret\n") }
        defer { target.stop() }
        let requests = Requests()
        let hops = Mutex(0)
        let limit = Mutex(1)
        let server = try ScriptedServer { connection in
            while let request = try? connection.readRequest(timeout: 10) {
                requests.add(request)
                if request.target.hasPrefix("/robots") {
                    let hop = hops.withLock { $0 += 1; return $0 }
                    let next = hop < limit.withLock({ $0 }) ? "/robots-\(hop)" : "http://127.0.0.1:\(target.port)/robots.txt"
                    try connection.write("HTTP/1.1 301 Moved\r\nLocation: \(next)\r\nContent-Length: 0\r\n\r\n")
                } else {
                    try connection.write(ScriptedResponse.text("page"))
                }
            }
        }
        defer { server.stop() }
        let base = "http://127.0.0.1:\(server.port)"
        limit.withLock { $0 = 5 }
        let followed = try runUVFetch(["--robots", "--jsonl", "-", "\(base)/secret/1", "\(base)/open"])
        let records = Self.records(followed.stdout)
        #expect((records["/secret/1"]?["error"] as? [String: Any])?["code"] as? String == "disallowedByRobots", "\(followed.stdout)")
        #expect(records["/open"]?["status"] as? Int == 200)
        #expect(elsewhere.robotsFetches == 1)

        hops.withLock { $0 = 0 }
        limit.withLock { $0 = 6 }
        let tooMany = try runUVFetch(["--robots", "--jsonl", "-", "\(base)/secret/2"])
        #expect(Self.records(tooMany.stdout)["/secret/2"]?["status"] as? Int == 200, "\(tooMany.stdout)")
        #expect(elsewhere.robotsFetches == 1, "the sixth hop is not followed")
    }

    /// Many URLs of several origins: each origin's robots.txt once, before its first page; the
    /// part of a file past 500 KiB is not read.
    @Test func oncePerOriginAndOnlyTheFirst500KiB() throws {
        let padding = String(repeating: "# padding line that is only a comment\n", count: 500 * 1024 / 38 + 10)
        let large = "User-agent: *\nDisallow: /a\n" + padding + "Disallow: /b\n"
        let requestsByOrigin = (0..<3).map { _ in Requests() }
        let servers = try requestsByOrigin.map { requests in try Self.origin(requests) { ScriptedResponse.text(large) } }
        defer { servers.forEach { $0.stop() } }
        var urls: [String] = []
        for index in 0..<20 {
            for server in servers { urls.append("http://127.0.0.1:\(server.port)/\(index % 2 == 0 ? "a" : "b")/\(index)") }
        }
        let result = try runUVFetch(["--robots", "--concurrency", "16", "--jsonl", "-"] + urls)
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == urls.count)
        for requests in requestsByOrigin {
            #expect(requests.robotsFetches == 1)
            #expect(requests.all.first?.path == "/robots.txt")
            // /b/... allowed: its rule lies past the first 500 KiB.
            #expect(requests.pages.count == 10)
            #expect(requests.pages.allSatisfy { $0.path.hasPrefix("/b/") })
        }
    }
}
