import ArgumentParser
import BenchSupport
import CAllocCounter
import Foundation
import UVNetworking

#if canImport(Glibc)
import Glibc
#endif

/// HTTP/2 side by side (issue #36): h2load and UVNetworking's task API take turns against one
/// private nghttpd with the same connections and streams, over h2c and over TLS; then what an
/// HTTP/2 request costs the client beside an HTTP/1.1 one, what an idle HTTP/2 connection and an
/// open stream hold, and whether 10,000 streams in sequence on one connection leave anything
/// behind.
@main
struct H2Bench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "h2bench",
        abstract: "h2load vs UVNetworking over HTTP/2 against a private nghttpd (12-byte body).",
        discussion: """
        For each shape C×M (C connections, M streams each) and each transport (h2c by prior knowledge, \
        TLS with ALPN h2), nghttpd runs with one worker and SETTINGS_MAX_CONCURRENT_STREAMS = M, so both \
        clients open C connections of M streams: h2load -t1 -c C -m M, and a session with \
        maximumConnectionsPerHost = C keeping C×M tasks in flight (each completion checks the response \
        and resumes the next task). Rounds alternate after a warm-up of each. A run where any request \
        failed is invalid (exit status 2); missing a goal is a verdict, not a failure.
        """
    )

    @Option(help: "Seconds per round.")
    var seconds: Int = 5

    @Option(help: "Rounds of each client per shape.")
    var rounds: Int = 3

    @Option(help: "Warm-up seconds for each client before the rounds.")
    var warmup: Int = 2

    @Option(help: "Shapes as CONNECTIONSxSTREAMS, comma-separated.")
    var shapes: String = "1x64,4x32"

    @Flag(help: "Leave out the TLS runs.")
    var skipTLS = false

    @Option(help: "The goal: UVNetworking's median over h2load's median.")
    var goal: Double = 0.6

    @Option(help: "Requests over which allocations are counted (0 skips the count).")
    var allocRequests: Int = 20_000

    @Option(help: "Idle HTTP/2 connections opened to measure the heap one costs (0 skips it).")
    var idleConnections: Int = 200

    @Option(help: "Streams held open at once on one connection to measure the heap one costs (0 skips it).")
    var openStreams: Int = 100

    @Option(help: "Streams run one after another on one connection to look for growth (0 skips it).")
    var sequentialStreams: Int = 10_000

    @Option(help: "Write a markdown summary to this file.")
    var markdown: String?

    @Option(help: "h2load executable.")
    var h2load: String = "/usr/bin/h2load"

    @Option(help: "nghttpd executable.")
    var nghttpd: String = "/usr/sbin/nghttpd"

    @Option(help: "nginx executable (the HTTP/1.1 reference for CPU per request).")
    var nginx: String = "/usr/sbin/nginx"

    @Option(help: "Only run UVNetworking over h2c for this many requests, with the first shape (for callgrind and perf).")
    var oursOnly: Int?

    @Option(help: "With --ours-only: this h2c server instead of a private nghttpd (valgrind cannot start one).")
    var url: String?

    @Flag(help: "With --ours-only: completions on the loop thread (deliversOnEventLoop), to see the loop's own limit.")
    var onLoop = false

    func run() throws {
        Cleanup.installSignalHandlers()
        defer { Cleanup.runNow() }
        let parsed = try parsedShapes()
        if let requests = oursOnly {
            try runOursOnly(requests: requests, shape: parsed[0])
            return
        }
        var report = H2Report(seconds: seconds, rounds: rounds, goal: goal)
        for tls in skipTLS ? [false] : [false, true] {
            for (connections, streams) in parsed {
                report.shapes.append(try runShape(connections: connections, streams: streams, tls: tls))
            }
        }
        if let first = parsed.first {
            report.http1 = try runHTTP1Reference(inFlight: first.0 * first.1)
        }
        // Streams in sequence before the idle connections: the idle run's connections are still
        // being freed when it returns, which would blur a reading taken after it.
        if sequentialStreams > 0 { report.sequential = try measureSequential() }
        if idleConnections > 0 { report.idle = try measureIdle() }
        if openStreams > 0 { report.open = try measureOpenStreams() }
        let text = report.markdown()
        print("")
        print(text)
        if let markdown { try text.write(toFile: markdown, atomically: true, encoding: .utf8) }
        if let invalid = report.firstInvalid {
            FileHandle.standardError.write(Data("h2bench: INVALID RUN: \(invalid)\n".utf8))
            throw ExitCode(2)
        }
    }

    private func parsedShapes() throws -> [(Int, Int)] {
        try shapes.split(separator: ",").map { shape in
            let parts = shape.split(separator: "x").compactMap { Int($0) }
            guard parts.count == 2, parts.allSatisfy({ $0 > 0 }) else { throw ValidationError("bad shape \(shape): CONNECTIONSxSTREAMS") }
            return (parts[0], parts[1])
        }
    }

    /// A session speaking HTTP/2 to `server`: by prior knowledge over http, through ALPN over TLS.
    private func configuration(_ server: NGHTTPDServer, connections: Int) -> SessionConfiguration {
        var configuration = SessionConfiguration()
        configuration.maximumConnectionsPerHost = connections
        configuration.httpVersion = server.certificates == nil ? .http2PriorKnowledge : .http2
        configuration.tls.additionalTrustedCAFiles = server.certificates.map { [$0.caFile] } ?? []
        return configuration
    }

    private func runShape(connections: Int, streams: Int, tls: Bool) throws -> ShapeResult {
        let server = try NGHTTPDServer(executable: nghttpd, tls: tls, maximumStreams: streams)
        defer { server.stop() }
        let name = "\(tls ? "TLS" : "h2c") \(connections)×\(streams)"
        say("h2bench: \(name): nghttpd (pid \(server.pid)) on \(server.url.absoluteString)")
        let load = ClosedLoopLoad(request: Request(url: server.url), configuration: configuration(server, connections: connections))
        defer { load.shutdown() }
        let inFlight = connections * streams
        if warmup > 0 {
            _ = try H2Load.run(executable: h2load, url: server.url, connections: connections, streams: streams, seconds: warmup)
            _ = load.run(concurrency: inFlight, seconds: Double(warmup), recordLatency: false)
        }
        var result = ShapeResult(name: name, connections: connections, streams: streams)
        result.openedConnections = load.manager.openConnectionCount
        for round in 1...rounds {
            let serverBefore = CPUTime.ofProcess(server.pid)
            let reference = try H2Load.run(executable: h2load, url: server.url, connections: connections, streams: streams, seconds: seconds)
            let serverMiddle = CPUTime.ofProcess(server.pid)
            let cpuBefore = CPUTime.ofSelf()
            let ours = load.run(concurrency: inFlight, seconds: Double(seconds), recordLatency: false)
            let cpu = CPUTime.ofSelf() - cpuBefore
            let serverAfter = CPUTime.ofProcess(server.pid)
            result.rounds.append(H2Round(
                h2load: reference, h2loadServerCPU: zip2(serverMiddle, serverBefore).map { ($0 - $1).total },
                ours: ours, oursCPU: cpu.total, oursServerCPU: zip2(serverAfter, serverMiddle).map { ($0 - $1).total }))
            say(String(format: "  round %d: h2load %.0f req/s, UVNetworking %.0f req/s (%.2fx)%@", round,
                       reference.requestsPerSecond, ours.requestsPerSecond, ours.requestsPerSecond / max(1, reference.requestsPerSecond),
                       ours.isValid && reference.failed == 0 ? "" : " INVALID: \(ours.firstError ?? "h2load saw \(reference.failed) failures")"))
        }
        result.allocationsPerRequest = allocRequests > 0 ? countAllocations(load, inFlight: inFlight) : nil
        return result
    }

    private func runOursOnly(requests: Int, shape: (Int, Int)) throws {
        let server = try url == nil ? NGHTTPDServer(executable: nghttpd, maximumStreams: shape.1) : nil
        defer { server?.stop() }
        guard let target = server?.url ?? url.flatMap(URL.init(string:)) else { throw ValidationError("bad --url") }
        var configuration = SessionConfiguration()
        configuration.maximumConnectionsPerHost = shape.0
        configuration.httpVersion = .http2PriorKnowledge
        let load = ClosedLoopLoad(request: Request(url: target), configuration: configuration, deliversOnEventLoop: onLoop)
        defer { load.shutdown() }
        let before = CPUTime.ofSelf()
        let result = load.run(concurrency: shape.0 * shape.1, requests: requests, recordLatency: false)
        let cpu = (CPUTime.ofSelf() - before).total
        say(String(format: "h2bench: %d requests, %d errors, %.0f req/s, CPU %.2f µs/request%@", result.completed, result.errors,
                   result.requestsPerSecond, cpu / Double(max(1, result.completed)), result.firstError.map { ", first error: \($0)" } ?? ""))
        if !result.isValid { throw ExitCode(2) }
    }

    /// Our client over HTTP/1.1 doing the same work (small GETs, the same number in flight, one
    /// connection per request in flight) against nginx: the CPU per request HTTP/2 should beat.
    private func runHTTP1Reference(inFlight: Int) throws -> HTTP1Reference {
        let server = try NginxServer(executable: nginx)
        defer { server.stop() }
        say("h2bench: HTTP/1.1 reference: \(inFlight) connections to nginx on \(server.url.absoluteString)")
        let load = ClosedLoopLoad(url: server.url, connections: inFlight)
        defer { load.shutdown() }
        if warmup > 0 { _ = load.run(concurrency: inFlight, seconds: Double(warmup), recordLatency: false) }
        var runs: [(LoadResult, Double)] = []
        for _ in 1...rounds {
            let before = CPUTime.ofSelf()
            let result = load.run(concurrency: inFlight, seconds: Double(seconds), recordLatency: false)
            runs.append((result, (CPUTime.ofSelf() - before).total))
        }
        return HTTP1Reference(inFlight: inFlight, runs: runs,
                              allocationsPerRequest: allocRequests > 0 ? countAllocations(load, inFlight: inFlight) : nil)
    }

    /// Allocations per request over `allocRequests` requests, or nil when malloc is not interposed.
    private func countAllocations(_ load: ClosedLoopLoad, inFlight: Int) -> Double? {
        uvbench_alloc_counter_reset()
        uvbench_alloc_counter_enable(1)
        let probe = [Int](repeating: 1, count: 1000)
        uvbench_alloc_counter_enable(0)
        withExtendedLifetime(probe) {}
        guard uvbench_alloc_counter_read().allocations > 0 else { return nil }
        uvbench_alloc_counter_reset()
        uvbench_alloc_counter_enable(1)
        let result = load.run(concurrency: inFlight, requests: allocRequests, recordLatency: false)
        uvbench_alloc_counter_enable(0)
        return Double(uvbench_alloc_counter_read().allocations) / Double(max(1, result.completed))
    }

    /// Longer than an idle connection waits before it gives nghttp2's freed memory back.
    private static let idleTrimWait = 1.5

    /// The heap one idle HTTP/2 connection holds: nghttpd allows one stream per connection, so
    /// `idleConnections` tasks resumed at once open that many connections, which then sit idle.
    private func measureIdle() throws -> IdleResult {
        let server = try NGHTTPDServer(executable: nghttpd, maximumStreams: 1)
        defer { server.stop() }
        let load = ClosedLoopLoad(request: Request(url: server.url), configuration: configuration(server, connections: idleConnections))
        defer { load.shutdown() }
        // One request first, so that the loop, the pool and their buffers exist before the baseline.
        _ = load.run(concurrency: 1, requests: 1, recordLatency: false)
        // A connection keeps the blocks nghttp2 freed until it has been idle a second
        // (HTTP2Connection.trimDelayMilliseconds): both readings come after that.
        Thread.sleep(forTimeInterval: Self.idleTrimWait)
        let before = Int(uvbench_heap_in_use())
        let result = load.run(concurrency: idleConnections, requests: idleConnections, recordLatency: false)
        Thread.sleep(forTimeInterval: Self.idleTrimWait)
        let after = settledHeapInUse()
        let opened = load.manager.openConnectionCount - 1
        return IdleResult(connections: opened, heapBytes: after - before, valid: result.isValid ? nil : result.firstError)
    }

    /// The heap one open stream holds, task included: `openStreams` POSTs on one connection whose
    /// bodies send one byte and then wait. nghttpd (`--echo-upload`, no early response) answers a
    /// request only once its body has ended, so every stream stays open, its task waiting, until
    /// the bodies are let go.
    private func measureOpenStreams() throws -> OpenStreamsResult {
        let server = try NGHTTPDServer(executable: nghttpd, maximumStreams: openStreams, echoUpload: true)
        defer { server.stop() }
        let manager = SessionManager(configuration: configuration(server, connections: 1))
        manager.completionQueue = DispatchQueue(label: "h2bench.open-streams")
        // Bytes as they come: nghttpd names its file text/html, which JSON's serializer refuses.
        manager.responseSerializer = HTTPResponseSerializer()
        defer { manager.invalidateSessionCancelingTasks(true, resetSession: false) }
        let done = DispatchSemaphore(value: 0)
        let failures = FailureLog()
        // One request first, so that the loop, the pool and the connection exist before the baseline.
        manager.dataTask(with: Request(url: server.url)) { _, _, error in
            if let error { failures.note(error) }
            done.signal()
        }.resume()
        done.wait()
        Thread.sleep(forTimeInterval: 0.2)
        let before = settledHeapInUse()
        let gates = (0..<openStreams).map { _ in AsyncStream<[UInt8]>.makeStream() }
        var tasks: [DataTask] = []
        for gate in gates {
            var request = Request(url: server.url.appendingPathComponent("upload"), method: .post, timeoutInterval: 120)
            gate.continuation.yield([0x61])
            request.bodyStream = StreamedBody(length: nil, oneShot: gate.stream)
            let task = manager.dataTask(with: request) { _, _, error in
                if let error { failures.note(error) }
                done.signal()
            }
            tasks.append(task)
            task.resume()
        }
        let deadline = Date().addingTimeInterval(30)
        while tasks.contains(where: { $0.countOfBytesSent < 1 }), Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        let opened = tasks.filter { $0.countOfBytesSent >= 1 && $0.state == .running }.count
        let after = settledHeapInUse()
        let connections = manager.openConnectionCount
        for gate in gates { gate.continuation.finish() }
        for _ in tasks { _ = done.wait(timeout: .now() + 30) }
        let invalid = opened < openStreams ? "only \(opened) of \(openStreams) streams were open at once" : failures.first
        return OpenStreamsResult(streams: opened, connections: connections, heapBytes: after - before, valid: invalid)
    }

    /// `sequentialStreams` GETs one after another on one connection (streams 1, 3, 5, ... up to
    /// 2 × that): the heap after the first thousand and after all of them.
    private func measureSequential() throws -> SequentialResult {
        let server = try NGHTTPDServer(executable: nghttpd)
        defer { server.stop() }
        let load = ClosedLoopLoad(request: Request(url: server.url), configuration: configuration(server, connections: 1))
        defer { load.shutdown() }
        let first = load.run(concurrency: 1, requests: 1_000, recordLatency: false)
        // What the runs before this one let go of is freed by now.
        Thread.sleep(forTimeInterval: 0.5)
        let before = settledHeapInUse()
        let rest = load.run(concurrency: 1, requests: sequentialStreams, recordLatency: false)
        let after = settledHeapInUse()
        let invalid = [first, rest].first { !$0.isValid }.map { $0.firstError ?? "\($0.errors) errors" }
        return SequentialResult(streams: sequentialStreams, connections: load.manager.openConnectionCount,
                                growthBytes: after - before, valid: invalid)
    }

    /// The smallest of a few heap readings 20 ms apart: completions still being freed do not count.
    private func settledHeapInUse() -> Int {
        var smallest = Int(uvbench_heap_in_use())
        for _ in 0..<10 {
            Thread.sleep(forTimeInterval: 0.02)
            smallest = min(smallest, Int(uvbench_heap_in_use()))
        }
        return smallest
    }
}

func say(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}
