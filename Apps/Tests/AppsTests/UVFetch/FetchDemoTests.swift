import Foundation
import Testing
import LoopbackHTTPServer
import UVFetchCore

/// `uvfetch demo` and the `FetchDemo` it runs: every generated URL fetched from the embedded
/// server, the byte count exact, the server stopped afterwards.
@Suite(.tags(.childProcess), .serialized) struct FetchDemoTests {
    /// The body bytes of items 0..<count.
    private func bodyBytes(_ count: Int) -> Int {
        (0..<count).reduce(0) { $0 + LoopbackHTTPServer.itemBodyLength($1) }
    }

    @Test func theCommandFetchesEveryURLAndExitsZero() throws {
        let result = try runUVFetch(["demo", "--count", "2000"])
        let text = result.stdout
        #expect(result.status == 0)
        let lines = text.split(separator: "\n")
        #expect(lines.first?.hasPrefix("uvfetch demo: 2000 GETs of http://127.0.0.1:") == true)
        #expect(lines.first?.hasSuffix("64 in flight, up to 64 connections") == true)
        #expect(lines.count > 1 && lines[1].hasPrefix("2000 requests in "))
        #expect(text.contains(": 2000 succeeded, 0 failed, \(bodyBytes(2000)) body bytes, "))
        #expect(text.contains("\nstatus: 2xx 2000\n"))
    }

    /// A closed standard output ends the demo as it ends `fetch`: by SIGPIPE after the run,
    /// silent, or, with SIGPIPE ignored, exit 23 with the message. It printed its lines into
    /// the void and exited 0.
    @Test func aClosedPipeEndsTheDemoAsItEndsFetch() throws {
        let result = try runShell("""
            trap - PIPE
            "$UVFETCH" demo --count 200 --quiet | head -1 > /dev/null; echo "default=${PIPESTATUS[0]}"
            "$UVFETCH" demo --count 200 --quiet | true; echo "closed=${PIPESTATUS[0]}"
            trap '' PIPE
            "$UVFETCH" demo --count 200 --quiet | true; echo "ignored=${PIPESTATUS[0]}"
            """)
        #expect(result.stdout.contains("default=\(128 + SIGPIPE)"), "\(result.stdout) \(result.stderr)")
        #expect(result.stdout.contains("closed=\(128 + SIGPIPE)"), "\(result.stdout) \(result.stderr)")
        #expect(result.stdout.contains("ignored=\(ExitStatus.writeError)"), "\(result.stdout) \(result.stderr)")
        #expect(result.stderr == "uvfetch: write error on standard output: Broken pipe\n", "\(result.stderr)")
    }

    @Test func theOptionsReachTheRunAndBadCountsAreUsageErrors() throws {
        func run(_ arguments: [String]) throws -> (status: Int32, stdout: String) {
            let result = try runUVFetch(["demo"] + arguments)
            return (result.status, result.stdout)
        }
        let small = try run(["--count", "10", "--concurrency", "2", "--per-host", "1"])
        #expect(small.status == 0)
        #expect(small.stdout.hasPrefix("uvfetch demo: 10 GETs of "))
        #expect(small.stdout.contains("/items/0..9 from an embedded loopback server, 2 in flight, up to 1 connection\n"))
        #expect(small.stdout.contains("\n10 requests in "))
        for bad in [["--count", "0"], ["--concurrency", "-1"], ["--per-host", "0"], ["--count", "many"]] {
            #expect(try run(bad).status == ExitStatus.usage, "for \(bad)")
        }
    }

    @Test func runsInProcessAndStopsItsServer() throws {
        var demo = FetchDemo()
        demo.count = 500
        demo.concurrency = 8
        demo.perHost = 4
        let announced = DiagnosticLines()
        let diagnostics = DiagnosticLines()
        let outcome = try demo.run(announce: { announced.append($0) }, diagnostics: { diagnostics.append($0) })
        let statistics = outcome.fetch.statistics
        #expect(statistics.succeeded == 500)
        #expect(statistics.failed == 0)
        #expect(statistics.bytes == bodyBytes(500))
        #expect(statistics.exitStatus == ExitStatus.success)
        #expect(announced.lines == [demo.announcement(port: outcome.port)])
        #expect(diagnostics.lines.isEmpty)
        #expect(throws: (any Error).self, "the server is stopped") { try RawTCPClient(port: outcome.port, timeout: 1) }
    }

    @Test func theSettingsPrintNoLinePerURL() {
        var demo = FetchDemo()
        demo.concurrency = 3
        demo.perHost = 2
        let settings = demo.settings()
        #expect(settings.concurrency == 3)
        #expect(settings.perHost == 2)
        #expect(!settings.printsLines)
    }

    @Test func urlsAreMadeLazilyInOrder() {
        let urls = DemoURLs(port: 8080, count: 3)
        #expect(Array(urls) == [.url(URL(string: "http://127.0.0.1:8080/items/0")!),
                                .url(URL(string: "http://127.0.0.1:8080/items/1")!),
                                .url(URL(string: "http://127.0.0.1:8080/items/2")!)])
        // Nothing is built ahead: a practically endless list costs only what is taken.
        let endless = DemoURLs(port: 1, count: .max)
        #expect(Array(endless.prefix(2)).count == 2)
        #expect(Array(DemoURLs(port: 1, count: 0)).isEmpty)
    }
}
