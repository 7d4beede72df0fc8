import Foundation
import Glibc
import Synchronization
import Testing

/// Apps/Examples/ExampleService run as a child process against a loopback server and stopped by
/// SIGTERM: its output must show the library's logging, metrics and tracing working together,
/// and the drain.
@Suite(.tags(.childProcess)) struct ExampleServiceTests {
    /// The URL password the example is given: it must never be printed.
    private static let secret = "s3cr3t-pw"

    /// One `span finished` line of the example's tracer.
    private struct LoggedSpan {
        var name: String
        var traceID: String
        var spanID: String
        var parentID: String
        var line: String

        var traceparent: String { "00-\(traceID)-\(spanID)-01" }

        init?(_ line: Substring) {
            guard line.hasSuffix("span finished"),
                  let name = Self.value("span", in: line, upTo: " span-id="),
                  let traceID = Self.value("trace-id", in: line), let spanID = Self.value("span-id", in: line),
                  let parentID = Self.value("parent-id", in: line) else { return nil }
            (self.name, self.traceID, self.spanID, self.parentID, self.line) = (name, traceID, spanID, parentID, String(line))
        }

        /// The value of `key=` in a log line, up to `end` (a space by default: metadata are
        /// printed sorted by key, `key=value` separated by spaces).
        static func value(_ key: String, in line: Substring, upTo end: String = " ") -> String? {
            guard let start = line.range(of: " \(key)=")?.upperBound,
                  let stop = line[start...].range(of: end)?.lowerBound else { return nil }
            return String(line[start..<stop])
        }
    }

    @Test func theExampleServiceLogsMeasuresTracesAndDrainsOnSigterm() throws {
        let received = Mutex<[String]>([])
        let server = try ScriptedServer { connection in
            try connection.serveKeepAlive(idleTimeout: 10) { request in
                received.withLock { $0.append(request.header("traceparent") ?? "none") }
                return ScriptedResponse.text("item\n")
            }
        }
        defer { server.stop() }
        // One URL with a password, one that is refused (nothing listens on port 1): its task fails,
        // which the library logs at debug.
        let example = try ChildProcess("uvnetworking-example-service", arguments: [
            "--verbose", "--interval", "0.05", "--grace", "5",
            "http://user:\(Self.secret)@127.0.0.1:\(server.port)/items/1", "http://127.0.0.1:1/refused",
        ])
        #expect(example.waitForOutput("round=3", timeout: 30), "\(example.text)")
        example.send(SIGTERM)
        let status = example.waitForExit(timeout: 15)
        let output = example.text
        let lines = output.split(separator: "\n")

        // The drain.
        #expect(status == 0, "\(output)")
        #expect(output.contains("fetcher stopped"), "\(output)")
        #expect(lines.contains { $0.hasSuffix("] stopped") && $0.contains("tasks-left=0") }, "\(output)")

        // Logging: the library's debug lines, a task's with its id and the fetcher's metadata.
        #expect(lines.contains { $0.contains(" debug ") && $0.hasSuffix("[UVNetworking] connection opened") }, "\(output)")
        #expect(lines.contains { $0.contains(" debug ") && $0.hasSuffix("[UVNetworking] task failed")
                && $0.contains(" uv.task.id=") && $0.contains(" round=") }, "\(output)")
        #expect(lines.contains { $0.contains("status=200") && $0.hasSuffix("fetched") }, "\(output)")
        #expect(!output.contains(Self.secret), "a URL password was printed: \(output)")

        // Metrics: Prometheus' exposition of the four metrics, dots turned into underscores.
        let port = "server_port=\"\(server.port)\""
        let address = "server_address=\"127.0.0.1\""
        func hasSample(_ name: String, _ labels: [String]) -> Bool {
            lines.contains { line in line.hasPrefix("\(name){") && labels.allSatisfy { line.contains($0) } }
        }
        #expect(hasSample("http_client_request_duration_count",
                          ["http_request_method=\"GET\"", "http_response_status_code=\"200\"", address, port]), "\(output)")
        #expect(hasSample("http_client_request_duration_count",
                          ["http_request_method=\"GET\"", "error_type=\"connectionRefused\"", "server_port=\"1\""]), "\(output)")
        #expect(hasSample("http_client_active_requests", ["http_request_method=\"GET\"", address, port]), "\(output)")
        #expect(hasSample("http_client_open_connections", ["http_connection_state=", address, port]), "\(output)")
        #expect(hasSample("http_client_connection_duration_count", [address, port]), "\(output)")

        // Tracing: every client span is the child of a round's span, in its trace, and the
        // server got the client span's context.
        let spans = lines.compactMap(LoggedSpan.init)
        let rounds = Dictionary(spans.filter { $0.name == "fetch round" }.map { ($0.spanID, $0) }, uniquingKeysWith: { a, _ in a })
        let clients = spans.filter { $0.name == "GET" }
        #expect(rounds.count >= 3 && clients.count >= 6, "\(output)")
        for client in clients {
            #expect(client.line.contains("kind=client"), "\(client.line)")
            #expect(rounds[client.parentID]?.traceID == client.traceID, "not a round's child: \(client.line)")
        }
        for round in rounds.values { #expect(round.parentID == "none", "\(round.line)") }
        #expect(clients.contains { $0.line.contains("status=error") && $0.line.contains("error.type=connectionRefused") }, "\(output)")
        let sent = received.withLock { $0 }
        let logged = Set(clients.map(\.traceparent))
        #expect(sent.count >= 3, "\(output)")
        for traceparent in sent { #expect(logged.contains(traceparent), "the server got \(traceparent): \(output)") }
    }

    @Test func theExampleServiceRefusesABadCommandLine() throws {
        let example = try ChildProcess("uvnetworking-example-service", arguments: ["not a url"])
        #expect(example.waitForExit(timeout: 15) == 64)
    }
}
