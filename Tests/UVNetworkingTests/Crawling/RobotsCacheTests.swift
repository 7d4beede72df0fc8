import Foundation
import Synchronization
import Testing
@testable import UVNetworking

/// `RobotsCache` against scripted servers on loopback: one fetch per origin however many ask
/// at once, the crawler's User-Agent and product token, RFC 9309's reading of statuses and
/// failures, redirects across origins, the lifetime.
@Suite(.tags(.loopback)) struct RobotsCacheTests {
    /// A server that answers /robots.txt with `answer` and counts the fetches and the
    /// User-Agents they sent.
    private final class RobotsServer: Sendable {
        let server: ScriptedServer

        init(_ answer: @escaping @Sendable (ScriptedRequest) -> String) throws {
            let seen = Seen()
            self.seenBox = seen
            server = try ScriptedServer { connection in
                try connection.serveKeepAlive { request in
                    seen.value.withLock { $0.append("\(request.target) \(request.header("User-Agent") ?? "-")") }
                    return answer(request)
                }
            }
        }

        final class Seen: Sendable { let value = Mutex<[String]>([]) }
        private let seenBox: Seen
        var requests: [String] { seenBox.value.withLock { $0 } }
        var origin: String { "http://127.0.0.1:\(server.port)" }
    }

    private static let file = """
        User-agent: mycrawler
        Disallow: /private/
        Crawl-delay: 2

        User-agent: *
        Disallow: /
        """

    @Test func oneFetchPerOriginWhateverAsksAtOnce() async throws {
        let server = try RobotsServer { _ in ScriptedResponse.text(Self.file) }
        let robots = try RobotsCache(userAgent: "MyCrawler/2.1 (+https://example.com/bot)")
        #expect(robots.productToken == "MyCrawler")
        let origin = server.origin
        let answers = await withTaskGroup(of: Bool.self) { group in
            for index in 0..<20 {
                group.addTask { await robots.isAllowed(URL(string: "\(origin)/page/\(index)")!) }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(answers == Array(repeating: true, count: 20))
        #expect(await robots.isAllowed(URL(string: "\(origin)/private/report")!) == false)
        #expect(await robots.rules(for: URL(string: "\(origin)/")!).crawlDelay == 2)
        #expect(robots.cachedRules(for: URL(string: "\(origin)/x")!)?.isAllowed(pathAndQuery: "/private/x") == false)
        #expect(server.requests == ["/robots.txt MyCrawler/2.1 (+https://example.com/bot)"])
        await robots.shutdown()
        server.server.stop()
    }

    @Test func statusesAndFailuresAreReadAsTheRFCSays() async throws {
        let missing = try RobotsServer { _ in ScriptedResponse.text("no", status: 404, reason: "Not Found") }
        let forbidden = try RobotsServer { _ in ScriptedResponse.text("no", status: 403, reason: "Forbidden") }
        let failing = try RobotsServer { _ in ScriptedResponse.text("down", status: 503, reason: "Service Unavailable") }
        let closed = try ScriptedServer { _ in }
        let closedPort = closed.port
        closed.stop()
        let robots = try RobotsCache(userAgent: "mycrawler")
        #expect(await robots.isAllowed(URL(string: "\(missing.origin)/any")!))
        #expect(await robots.isAllowed(URL(string: "\(forbidden.origin)/any")!))
        #expect(await robots.isAllowed(URL(string: "\(failing.origin)/any")!) == false)
        #expect(await robots.isAllowed(URL(string: "http://127.0.0.1:\(closedPort)/any")!) == false)
        // /robots.txt itself is always allowed, and a URL without a host has no robots.txt.
        #expect(await robots.isAllowed(URL(string: "\(failing.origin)/robots.txt")!))
        #expect(await robots.isAllowed(URL(string: "file:///etc/hosts")!))
        await robots.shutdown()
        for server in [missing, forbidden, failing] { server.server.stop() }
    }

    @Test func redirectsAreFollowedAcrossOriginsUpToFive() async throws {
        let target = try RobotsServer { _ in ScriptedResponse.text("User-agent: *\nDisallow: /moved/\n") }
        let targetOrigin = target.origin
        let redirecting = try RobotsServer { _ in
            ScriptedResponse.text("", status: 301, reason: "Moved Permanently", headers: [("Location", "\(targetOrigin)/robots.txt")])
        }
        let looping = try RobotsServer { request in
            let hop = Int(request.target.split(separator: "=").last ?? "0") ?? 0
            return ScriptedResponse.text("", status: 302, reason: "Found", headers: [("Location", "/robots.txt?hop=\(hop + 1)")])
        }
        let robots = try RobotsCache(userAgent: "mycrawler")
        #expect(await robots.isAllowed(URL(string: "\(redirecting.origin)/moved/x")!) == false)
        #expect(await robots.isAllowed(URL(string: "\(redirecting.origin)/kept")!))
        #expect(target.requests.count == 1)
        // More than five redirects: the file is unavailable, everything allowed (§2.3.1.2).
        #expect(await robots.isAllowed(URL(string: "\(looping.origin)/any")!))
        #expect(looping.requests.count == 6)
        await robots.shutdown()
        for server in [target, redirecting, looping] { server.server.stop() }
    }

    @Test func rulesAreFetchedAgainAfterTheirLifetime() async throws {
        let server = try RobotsServer { _ in ScriptedResponse.text("User-agent: *\nDisallow: /a\n") }
        let kept = try RobotsCache(userAgent: "mycrawler")
        let brief = try RobotsCache(userAgent: "mycrawler", lifetime: 0)
        let url = URL(string: "\(server.origin)/a")!
        for _ in 0..<3 {
            #expect(await kept.isAllowed(url) == false)
            #expect(await brief.isAllowed(url) == false)
        }
        #expect(brief.cachedRules(for: url) == nil)
        #expect(server.requests.count == 4)
        kept.removeAll()
        #expect(kept.cachedRules(for: url) == nil)
        #expect(await kept.isAllowed(url) == false)
        #expect(server.requests.count == 5)
        await kept.shutdown()
        await brief.shutdown()
        server.server.stop()
    }
}
