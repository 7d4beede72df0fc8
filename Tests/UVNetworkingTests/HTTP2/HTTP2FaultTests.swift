import Foundation
import Synchronization
import Testing
@testable import UVNetworking

extension EndToEnd {
    /// The HTTP/2 driver against the scripted server (Tests/Scripts/h2_scripted_server.py), one
    /// scenario per case: well-behaved servers that make the client work (GOAWAY, refused
    /// streams, changing stream limits, flow control) and hostile ones (floods, bombs, malformed
    /// frames and responses). Each request ends exactly once, as the scenario says a correct
    /// client ends it; after a fault the session still fetches from the same server (on a new
    /// connection where the old one had to go), and nothing is left open.
    @Suite(.tags(.nginx)) struct HTTP2FaultTests {
        enum Expectation: Sendable, CustomStringConvertible {
            /// 200 with this body (nil: any body).
            case ok(String?)
            /// 200 with this many bytes of body.
            case okBytes(Int)
            /// An error, with this code when given.
            case fails(NetworkingError.Code?)
            /// Ends either way within the timeout (a flood the client may survive or refuse).
            case ends

            var description: String {
                switch self {
                case .ok(let body): return "ok(\(body ?? "any"))"
                case .okBytes(let count): return "ok(\(count) bytes)"
                case .fails(let code): return "fails(\(code.map { "\($0)" } ?? "any"))"
                case .ends: return "ends"
                }
            }
        }

        struct Scenario: Sendable, CustomTestStringConvertible {
            var name: String
            var expectation: Expectation
            var method: String = "GET"
            var body: String? = nil
            /// Whether `/ok` works on the same server afterwards (false where the server itself
            /// is broken for every request, or where the scenario answers every path alike).
            var okAfter = true
            var testDescription: String { "\(name) → \(expectation)" }
        }

        static let hello = "hello"

        static let scenarios: [Scenario] = [
            Scenario(name: "ok", expectation: .ok(hello)),
            Scenario(name: "echo", expectation: .ok(String(repeating: "0123456789", count: 20_000)), method: "POST",
                     body: String(repeating: "0123456789", count: 20_000), okAfter: false),
            Scenario(name: "echo-trickle", expectation: .ok(String(repeating: "x", count: 50_000)), method: "POST",
                     body: String(repeating: "x", count: 50_000), okAfter: false),
            Scenario(name: "big:2M", expectation: .okBytes(2 << 20), okAfter: false),
            Scenario(name: "slow-headers:100", expectation: .ok(hello)),
            Scenario(name: "tiny-data-frames:20000", expectation: .okBytes(20_000), okAfter: false),
            Scenario(name: "informational", expectation: .ok(hello)),
            Scenario(name: "trailers", expectation: .ok(hello)),
            Scenario(name: "padding", expectation: .ok(hello)),
            Scenario(name: "unknown-frames", expectation: .ok(hello)),
            Scenario(name: "early-response", expectation: .ok(hello), method: "POST", body: String(repeating: "y", count: 1 << 20)),
            Scenario(name: "continuation-flood:2", expectation: .fails(nil)),
            Scenario(name: "continuation-flood-empty:2", expectation: .fails(nil)),
            Scenario(name: "hpack-bomb", expectation: .fails(.responseHeadTooLarge)),
            Scenario(name: "header-list-64k", expectation: .fails(.responseHeadTooLarge)),
            Scenario(name: "hpack-bad-index", expectation: .fails(nil)),
            Scenario(name: "frame-inside-header-block", expectation: .fails(nil)),
            Scenario(name: "continuation-without-headers", expectation: .fails(nil)),
            Scenario(name: "headers-frame-too-large", expectation: .fails(nil)),
            Scenario(name: "missing-status", expectation: .fails(.malformedResponse)),
            Scenario(name: "uppercase-header", expectation: .fails(.malformedResponse)),
            Scenario(name: "connection-header", expectation: .fails(.malformedResponse)),
            Scenario(name: "transfer-encoding", expectation: .fails(.malformedResponse)),
            Scenario(name: "pseudo-after-regular", expectation: .fails(.malformedResponse)),
            Scenario(name: "request-pseudo-in-response", expectation: .fails(.malformedResponse)),
            Scenario(name: "duplicate-status", expectation: .fails(.malformedResponse)),
            Scenario(name: "empty-header-name", expectation: .fails(.malformedResponse)),
            Scenario(name: "header-value-newline", expectation: .fails(.malformedResponse)),
            Scenario(name: "content-length-less-data", expectation: .fails(.malformedResponse)),
            Scenario(name: "content-length-more-data", expectation: .fails(.malformedResponse)),
            Scenario(name: "informational-end-stream", expectation: .fails(.malformedResponse)),
            Scenario(name: "trailers-with-pseudo", expectation: .fails(.malformedResponse)),
            Scenario(name: "trailers-without-end-stream", expectation: .fails(.malformedResponse)),
            Scenario(name: "data-before-headers", expectation: .fails(nil)),
            Scenario(name: "data-on-stream-0", expectation: .fails(nil)),
            Scenario(name: "data-after-end-stream", expectation: .ok(hello)),
            Scenario(name: "headers-on-closed-stream", expectation: .ok(hello)),
            Scenario(name: "rst-idle-stream", expectation: .fails(nil)),
            Scenario(name: "push-promise", expectation: .fails(nil)),
            Scenario(name: "ping-bad-length", expectation: .fails(nil)),
            Scenario(name: "settings-bad-length", expectation: .fails(nil)),
            Scenario(name: "settings-enable-push", expectation: .fails(nil), okAfter: false),
            Scenario(name: "settings-initial-window-too-big", expectation: .fails(nil), okAfter: false),
            Scenario(name: "data-frame-too-large", expectation: .fails(nil)),
            Scenario(name: "bad-padding", expectation: .fails(nil)),
            Scenario(name: "data-beyond-window", expectation: .ends),
            Scenario(name: "window-update-overflow", expectation: .fails(nil)),
            Scenario(name: "window-update-overflow-stream", expectation: .fails(nil)),
            Scenario(name: "window-update-zero", expectation: .fails(nil)),
            Scenario(name: "settings-flood", expectation: .ends),
            Scenario(name: "ping-flood", expectation: .ends),
            Scenario(name: "rst-flood", expectation: .ends),
            Scenario(name: "empty-data-flood", expectation: .ends),
            Scenario(name: "rst-every-request", expectation: .fails(.connectionReset)),
            Scenario(name: "no-end-stream-then-close", expectation: .fails(nil)),
            Scenario(name: "goaway-error", expectation: .fails(nil)),
            Scenario(name: "no-settings-silent", expectation: .fails(nil), okAfter: false),
            Scenario(name: "no-settings-headers", expectation: .fails(nil), okAfter: false),
            Scenario(name: "http1-server", expectation: .fails(nil), okAfter: false),
        ]

        private func harness() -> ClientHarness {
            ClientHarness {
                $0.httpVersion = .http2PriorKnowledge
                $0.connectTimeout = 3
            }
        }

        private func request(_ server: H2ScriptedServer, _ scenario: Scenario, path: String) -> Request {
            var request = ClientHarness.request(server.url(path), method: HTTPRequest.Method(scenario.method)!, body: scenario.body, timeout: 5)
            request.totalTimeoutInterval = 10
            return request
        }

        @Test(arguments: scenarios)
        func scenarioEndsAsACorrectClientEndsIt(_ scenario: Scenario) throws {
            let server = try H2ScriptedServer(scenario: scenario.name)
            defer { server.stop() }
            let harness = harness()
            defer { harness.finish() }
            let outcome = harness.fetch(request(server, scenario, path: "/fault"), within: 30)
            #expect(outcome.calls == 1)
            switch scenario.expectation {
            case .ok(let body):
                #expect(outcome.error == nil, "\(server.output().suffix(2000))")
                #expect(outcome.status == 200)
                if let body { #expect(outcome.text == body) }
            case .okBytes(let count):
                #expect(outcome.error == nil)
                #expect(outcome.data?.count == count)
            case .fails(let code):
                #expect(outcome.error != nil, "a \(outcome.status ?? 0) with \(outcome.data?.count ?? 0) bytes")
                if let code { #expect(outcome.code == code, "\(String(describing: outcome.error))") }
            case .ends:
                break
            }
            if scenario.okAfter {
                let after = harness.fetch(request(server, Scenario(name: scenario.name, expectation: .ok(Self.hello)), path: "/ok"), within: 30)
                #expect(after.status == 200, "after the fault: \(String(describing: after.error))")
                #expect(after.text == Self.hello)
            }
        }

        /// Well-behaved servers that end connections and refuse streams: every request succeeds,
        /// whatever its method, because each one the server did not process is sent again.
        @Test(arguments: ["goaway-after:3", "goaway-random:7", "goaway-random:11", "refuse-every:3", "max-streams:2"])
        func everyRequestSucceedsThroughGoAwaysAndRefusals(_ scenario: String) throws {
            let server = try H2ScriptedServer(scenario: scenario)
            defer { server.stop() }
            let harness = harness()
            defer { harness.finish() }
            let tasks = (0..<60).map { index in
                harness.makeTask(ClientHarness.request(server.url("/r\(index)"), method: index % 2 == 0 ? .get : .post, body: "b\(index)", timeout: 20))
            }
            for task in tasks { task.task.resume() }
            var failures: [String] = []
            for (index, task) in tasks.enumerated() {
                guard let outcome = task.wait(60) else {
                    failures.append("\(index): no outcome")
                    continue
                }
                if outcome.status != 200 || outcome.text != Self.hello { failures.append("\(index): \(String(describing: outcome.error))") }
            }
            #expect(failures.isEmpty, "\(failures.prefix(5)) — server: \(server.output().suffix(1500))")
        }

        /// A session that winds down with its tasks running says GOAWAY on its busy HTTP/2
        /// connections at once (RFC 9113 §6.8: the server learns that no stream will follow)
        /// and closes each after its last stream. The server answers only once it has heard
        /// GOAWAY: every request succeeds, then nothing is left open.
        @Test(arguments: ["invalidate", "shutdown"])
        func windingDownSaysGoAwayAndLetsRunningStreamsFinish(_ how: String) async throws {
            let server = try H2ScriptedServer(scenario: "hold-until-goaway:10")
            defer { server.stop() }
            let harness = harness()
            let tasks = (0..<3).map { harness.makeTask(ClientHarness.request(server.url("/held\($0)"), timeout: 20)) }
            for task in tasks { task.task.resume() }
            let held = waitUntil(timeout: 10) { server.output().components(separatedBy: "holding stream").count - 1 == 3 }
            #expect(held, "the server never held the 3 requests: \(server.output().suffix(1500))")
            if how == "invalidate" {
                harness.manager.invalidateSessionCancelingTasks(false, resetSession: false)
            } else {
                await harness.manager.shutdown(gracePeriod: .seconds(15))
            }
            for (index, task) in tasks.enumerated() {
                let outcome = task.wait(20)
                #expect(outcome?.status == 200 && outcome?.text == Self.hello,
                        "request \(index): \(outcome.map { "\($0.status ?? 0) \(String(describing: $0.error))" } ?? "no outcome")")
            }
            #expect(server.output().contains("client sent GOAWAY (error 0"))
            harness.expectNothingLeft()
        }

        /// A server that closes without GOAWAY: the idempotent requests it did not answer are
        /// sent again on a new connection, as over HTTP/1.1.
        @Test func closedWithoutGoAwaySequentialGETsAllSucceed() throws {
            let server = try H2ScriptedServer(scenario: "close-without-goaway-after:5")
            defer { server.stop() }
            let harness = harness()
            defer { harness.finish() }
            for index in 0..<12 {
                let outcome = harness.fetch(ClientHarness.request(server.url("/s\(index)"), timeout: 10))
                #expect(outcome.status == 200, "request \(index): \(String(describing: outcome.error))")
            }
        }
    }
}
