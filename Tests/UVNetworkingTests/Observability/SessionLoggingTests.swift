import Foundation
import Logging
import Testing
@testable import UVNetworking

/// swift-log: silent unless given a logger; the task's and the connections' events at debug and
/// trace, with the task's identifier; never a credential, cookie or pinned key.
@Suite(.tags(.loopback), .serialized) struct SessionLoggingTests {
    @Test func aSessionWithoutALoggerOrMetricsReportsNothing() throws {
        let server = try ScriptedServer { try $0.serveKeepAlive { _ in ScriptedResponse.text("ok") } }
        defer { server.stop() }
        let harness = ClientHarness()
        #expect(harness.manager.engine.observer == nil, "nothing to report to: no observer, no cost")
        #expect(harness.fetch("http://127.0.0.1:\(server.port)/").status == 200)
        harness.finish()
    }

    @Test func aLoggerAboveDebugIsNeverCalled() throws {
        let server = try ScriptedServer { try $0.serveKeepAlive { _ in ScriptedResponse.text("ok") } }
        defer { server.stop() }
        let recording = LogRecording()
        let harness = ClientHarness { $0.backgroundActivityLogger = recording.logger(level: .info) }
        var request = ClientHarness.request("http://127.0.0.1:\(server.port)/")
        request.logger = recording.logger(level: .info)
        #expect(harness.fetch(request).status == 200)
        harness.finish()
        #expect(recording.recorded.isEmpty)
    }

    /// A request carrying every kind of secret, redirected once (to a URL with a user and
    /// password) with cookies set on the way: every line at trace level is searched for them.
    @Test func noCredentialCookieOrURLPasswordIsEverLogged() throws {
        let secrets = ["alice", "s3cretPW", "tok-AUTH-123", "cHJveHktc2VjcmV0", "ck-COOKIE-456",
                       "sc-SETCOOKIE-789", "sc2-SECRET", "bob", "l0cPW", "Ym9iOmwwY1BX"]
        let port = Locked(0)
        let server = try ScriptedServer { connection in
            try connection.serveKeepAlive { request in
                if request.target == "/start" {
                    return ScriptedResponse.text("", status: 302, reason: "Found", headers: [
                        ("Location", "http://bob:l0cPW@127.0.0.1:\(port.value)/next"),
                        ("Set-Cookie", "sid=sc-SETCOOKIE-789; Path=/"),
                    ])
                }
                return ScriptedResponse.text("done", headers: [("Set-Cookie", "other=sc2-SECRET; Path=/")])
            }
        }
        defer { server.stop() }
        port.value = server.port
        let recording = LogRecording()
        let harness = ClientHarness { configuration in
            configuration.backgroundActivityLogger = recording.logger()
            configuration.cookieStore = CookieStore()
        }
        let request = ClientHarness.request("http://alice:s3cretPW@127.0.0.1:\(server.port)/start", fields: [
            ("Authorization", "Bearer tok-AUTH-123"),
            ("Proxy-Authorization", "Basic cHJveHktc2VjcmV0"),
            ("Cookie", "session=ck-COOKIE-456"),
        ])
        let (task, wait) = harness.makeTask(request)
        task.resume()
        let outcome = try #require(wait(30))
        #expect(outcome.status == 200)
        harness.finish()

        let lines = recording.recorded
        for line in lines {
            for secret in secrets {
                #expect(!line.text.contains(secret), "\(line.level) line logs a secret: \(line.text)")
            }
        }
        let id = "\(task.taskIdentifier)"
        let started = try #require(recording.lines("task started").first)
        #expect(started.level == .trace)
        #expect(started.metadata["uv.task.id"] == id)
        #expect(started.metadata["url.full"] == "http://127.0.0.1:\(server.port)/start")
        let redirect = try #require(recording.lines("following redirect").first)
        #expect(redirect.level == .debug)
        #expect(redirect.metadata["to"] == "http://127.0.0.1:\(server.port)/next")
        #expect(redirect.metadata["http.response.status_code"] == "302")
        #expect(recording.lines("task finished").first?.metadata["http.response.status_code"] == "200")
        #expect(recording.lines("opening connection").count == 1)
        #expect(recording.lines("connection opened").first?.metadata["server.port"] == "\(server.port)")
        #expect(recording.lines("reusing connection").first?.metadata["uv.task.id"] == id, "the redirect reused it")
        #expect(recording.lines("connection closed").first?.metadata["reason"] == "the session is shutting down")
    }

    @Test func aRequestsLoggerGetsItsTasksLinesWithItsIdentifier() throws {
        let server = try ScriptedServer { try $0.serveKeepAlive { _ in ScriptedResponse.text("ok") } }
        defer { server.stop() }
        let background = LogRecording()
        let mine = LogRecording()
        let harness = ClientHarness { $0.backgroundActivityLogger = background.logger() }
        var request = ClientHarness.request("http://127.0.0.1:\(server.port)/")
        request.logger = mine.logger()
        let (task, wait) = harness.makeTask(request)
        task.resume()
        #expect(wait(30)?.status == 200)
        let other = harness.fetch("http://127.0.0.1:\(server.port)/other")
        #expect(other.status == 200)
        harness.finish()
        let messages = mine.recorded.map(\.message)
        #expect(messages == ["task started", "waiting for a connection (none idle)", "using new connection", "task finished"])
        #expect(mine.recorded.allSatisfy { $0.metadata["uv.task.id"] == "\(task.taskIdentifier)" })
        // The other task's lines and the connection's go to the session's logger.
        #expect(background.lines("task started").count == 1)
        #expect(background.lines("reusing connection").count == 1)
        #expect(background.lines("opening connection").count == 1)
    }

    @Test func aRequestsLoggerIsNotPartOfWhatItIs() {
        let plain = ClientHarness.request("http://127.0.0.1:1/")
        var logged = plain
        logged.logger = LogRecording().logger()
        #expect(logged == plain, "equal requests share their prepared form whatever they log to")
    }

    @Test func aLookupFailureIsLoggedWithItsReason() throws {
        let recording = LogRecording()
        let harness = ClientHarness { configuration in
            configuration.backgroundActivityLogger = recording.logger()
            configuration.hostAddressOverrides = ["nowhere.uvn.test": "not-an-address"]
        }
        let outcome = harness.fetch("http://nowhere.uvn.test:1/")
        #expect(outcome.code == .dnsFailure)
        harness.finish()
        let failed = try #require(recording.lines("connection failed to open").first)
        #expect(failed.level == .debug)
        #expect(failed.metadata["error"]?.hasPrefix("dnsFailure") == true, "\(failed.text)")
        #expect(recording.lines("task failed").first?.metadata["error"]?.hasPrefix("dnsFailure") == true)
    }

    @Test func aRetryOnAStaleConnectionIsLogged() throws {
        // The server answers once, then closes the kept-alive connection without a word as the
        // next request arrives: the request is sent again on a new connection.
        let connections = Locked(0)
        let server = try ScriptedServer { connection in
            let first = connections.increment() == 1
            guard first else { return try connection.serveKeepAlive { _ in ScriptedResponse.text("second") } }
            _ = try connection.readRequestHead()
            try connection.write(ScriptedResponse.text("first"))
            _ = try? connection.readRequestHead()
            connection.close()
        }
        defer { server.stop() }
        let recording = LogRecording()
        let harness = ClientHarness { $0.backgroundActivityLogger = recording.logger() }
        #expect(harness.fetch("http://127.0.0.1:\(server.port)/a").status == 200)
        #expect(harness.fetch("http://127.0.0.1:\(server.port)/b").status == 200)
        harness.finish()
        #expect(recording.lines("retrying on a new connection: the reused one failed").count == 1)
        #expect(recording.lines("opening connection").count == 2)
    }
}

/// A value shared with a server script, set after the server is made.
final class Locked<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}

extension Locked where Value == Int {
    /// Adds one; the new value.
    func increment() -> Int { lock.withLock { stored += 1; return stored } }
}
