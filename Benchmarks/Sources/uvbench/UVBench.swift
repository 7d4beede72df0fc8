import ArgumentParser
import BareLoop
import BenchObservers
import BenchSupport
import CAllocCounter
import Foundation
import Histogram
import UVNetworking

#if canImport(Glibc)
import Glibc
#endif

/// The side-by-side run: wrk and UVNetworking take turns against one private nginx, in one
/// process run, so that their ratio is taken under the same conditions.
@main
struct UVBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "uvbench",
        abstract: "wrk vs UVNetworking's task model against a private nginx (12-byte body, keep-alive).",
        discussion: """
        Rounds alternate: wrk, UVNetworking, UVNetworking on its loop, the bare loop, wrk, ... each for \
        --seconds, after a warm-up of each. The bare loop is a keep-alive client written straight on libuv \
        and llhttp (no session, tasks or queues): the ceiling of UVNetworking's design on this machine. UVNetworking keeps exactly --connections tasks in flight: every completion \
        handler checks its response (200, the 12 bytes) and resumes the next task; the default mode \
        runs handlers on a serial completion queue, the run-on-loop mode (deliversOnEventLoop) on the \
        loop thread. A run with any error is invalid (exit status 2). Missing a goal is a verdict, not \
        a failure.
        """
    )

    @Option(help: "Seconds per round.")
    var seconds: Int = 5

    @Option(help: "Rounds of each client.")
    var rounds: Int = 3

    @Option(help: "Warm-up seconds for each client before the rounds.")
    var warmup: Int = 2

    @Option(help: "Requests in flight (wrk -c, and tasks in flight for UVNetworking).")
    var connections: Int = 64

    @Option(help: "Requests over which allocations are counted (0 skips the count).")
    var allocRequests: Int = 20_000

    @Option(help: "Idle keep-alive connections opened to measure the heap one costs (0 skips it).")
    var idleConnections: Int = 500

    @Flag(help: "Only measure the heap of --idle-connections idle connections (for heap profilers).")
    var idleOnly = false

    @Option(help: "Also run this uvfetch executable against wrk, taking turns (`uvfetch URL --repeat N`).")
    var uvfetch: String?

    @Option(help: "Write a markdown summary to this file.")
    var markdown: String?

    @Option(help: "The goal of the task API over plain HTTP: UVNetworking's median over wrk's median (issue #14).")
    var goal: Double = 0.85

    @Option(help: "The goal over HTTPS keep-alive: UVNetworking's median over wrk's median.")
    var httpsGoal: Double = 0.8

    @Option(help: "The goal of the run-on-loop mode (deliversOnEventLoop): its median over wrk's.")
    var onLoopGoal: Double = 1.0

    @Flag(help: "Leave out the run-on-loop mode (deliversOnEventLoop) from the side by side.")
    var skipOnLoop = false

    @Flag(help: "With --ours-only: run in the run-on-loop mode (deliversOnEventLoop).")
    var onLoop = false

    @Flag(help: "Leave out the bare libuv+llhttp loop (the design's ceiling) from the side by side.")
    var skipBare = false

    @Flag(help: "With --ours-only: give the session a logger at .info (which takes none of the library's debug and trace lines) and a metrics factory that counts (the cost of observability turned on).")
    var observe = false

    @Flag(help: "With --ours-only: give the session a tracer that keeps nothing but injects a traceparent (the cost of a span per task to the library itself).")
    var trace = false

    @Flag(help: "With --ours-only: run the bare libuv+llhttp loop instead of UVNetworking (e.g. under valgrind).")
    var bare = false

    @Option(help: "nginx executable.")
    var nginx: String = "/usr/sbin/nginx"

    @Option(help: "wrk executable.")
    var wrk: String = "/usr/bin/wrk"

    @Flag(help: "Run only UVNetworking for --seconds (one round, no wrk): for profilers and strace.")
    var oursOnly = false

    @Option(help: "With --ours-only: run exactly this many requests instead of --seconds (e.g. under valgrind).")
    var requests: Int?

    @Option(help: "With --ours-only: pipeline this many requests per connection (Request.httpShouldUsePipelining, SessionConfiguration.pipelineDepth): --connections connections, connections × depth requests in flight. 1: none.")
    var pipeline: Int = 1

    @Flag(help: "With --ours-only: go through an HTTP cache in memory (SessionConfiguration.cache) and GET nginx's /cached, the same body stored for a day: after the first, every request is a hit, answered without the network.")
    var cache = false

    @Option(help: "With --ours-only: use this server instead of starting nginx.")
    var url: String?

    @Flag(help: "Only start the private nginx, print its URL and wait for SIGINT/SIGTERM (for profiling a client alone).")
    var serveOnly = false

    // HTTPS (issue #4). See TLSBench.swift.

    @Flag(help: "Also run the side by side over HTTPS (wrk and UVNetworking, keep-alive, TLS 1.3).")
    var https = false

    @Option(help: "Also download a file of this many GiB over HTTPS and HTTP, curl vs UVNetworking (0: no downloads).")
    var downloadGib: Double = 0

    @Option(help: "Downloads of each kind (curl/UVNetworking × HTTPS/HTTP), alternating.")
    var downloadRepeats: Int = 3

    @Flag(help: "Also measure TLS handshakes per second, a new connection per request, with and without session resumption.")
    var handshakes = false

    @Option(help: "Requests (so connections) in flight for --handshakes.")
    var handshakeConcurrency: Int = 16

    @Flag(help: "With --ours-only --handshakes: only without session resumption (default: only with it).")
    var noResumption = false

    @Flag(help: "Skip the plain-HTTP side by side (run only the HTTPS modes asked for).")
    var skipPlain = false

    @Option(help: "With --ours-only --url https://...: a PEM CA file to trust.")
    var cacert: String?

    func validate() throws {
        guard seconds > 0, rounds > 0, warmup >= 0, connections > 0, allocRequests >= 0, idleConnections >= 0 else {
            throw ValidationError("--seconds, --rounds and --connections must be positive")
        }
        if (requests != nil || cacert != nil || (url != nil && !idleOnly)) && !oursOnly {
            throw ValidationError("--url, --requests and --cacert are for --ours-only runs (and --url for --idle-only)")
        }
        if (bare || onLoop) && !oursOnly { throw ValidationError("--bare and --on-loop are for --ours-only runs") }
        guard pipeline >= 1, pipeline == 1 || (oursOnly && !bare) else { throw ValidationError("--pipeline is for --ours-only runs of UVNetworking, at least 1") }
        if cache && (!oursOnly || bare || pipeline > 1) { throw ValidationError("--cache is for --ours-only runs of UVNetworking, without --pipeline") }
        guard downloadGib >= 0, downloadRepeats > 0, handshakeConcurrency > 0 else {
            throw ValidationError("--download-gib must not be negative, --download-repeats and --handshake-concurrency must be positive")
        }
    }

    /// Whether any HTTPS mode was asked for.
    var runsTLS: Bool { https || downloadGib > 0 || handshakes }

    func run() throws {
        Cleanup.installSignalHandlers()
        defer { Cleanup.runNow() }
        do {
            if idleOnly {
                _ = try runIdleMemory()
            } else if serveOnly {
                let server = try NginxServer(executable: nginx, https: https, largeFileBytes: downloadBytes)
                server.warmLargeFile()
                say("uvbench: nginx (master pid \(server.masterPID), worker pid \(server.workerPID.map(String.init) ?? "?")) serving \(server.url.absoluteString); stop with SIGINT or SIGTERM")
                if let httpsURL = server.httpsURL, let certificates = server.certificates {
                    say("uvbench: and \(httpsURL.absoluteString) (CA: \(certificates.caFile))")
                }
                while true { sleep(60) }
            } else if oursOnly {
                if downloadGib > 0 {
                    try runOursOnlyDownloads()
                } else if handshakes {
                    try runOursOnlyHandshakes()
                } else {
                    try runOursOnly()
                }
            } else {
                // Each phase reports; the summary is written even when a phase was invalid.
                var parts: [(markdown: String, invalid: InvalidRun?)] = []
                if !skipPlain { parts.append(try runSideBySide()) }
                if !skipPlain && idleConnections > 0 { parts.append(try runIdleMemory()) }
                if let uvfetch { parts.append(try runUVFetch(uvfetch)) }
                if runsTLS { parts.append(try runTLS()) }
                if let markdown {
                    try parts.map(\.markdown).joined(separator: "\n").write(toFile: markdown, atomically: true, encoding: .utf8)
                    say("uvbench: wrote \(markdown)")
                }
                if let invalid = parts.compactMap(\.invalid).first { throw invalid }
            }
        } catch let invalid as InvalidRun {
            say(invalid.description)
            throw ExitCode(2)
        }
    }

    // MARK: Profiling mode

    private func runOursOnly() throws {
        var server: NginxServer?
        let target: URL
        var configuration = SessionConfiguration()
        configuration.maximumConnectionsPerHost = connections
        if let url {
            guard let parsed = URL(string: url) else { throw ValidationError("bad --url") }
            target = parsed
            configuration.tls.additionalTrustedCAFiles = cacert.map { [$0] } ?? []
        } else {
            server = try NginxServer(executable: nginx, https: https)
            target = https ? server!.httpsURL! : server!.url
            configuration.tls.additionalTrustedCAFiles = server!.certificates.map { [$0.caFile] } ?? []
        }
        defer { server?.stop() }
        if bare { return try runBareOnly(target) }
        if observe { ObservedRun.configure(&configuration) }
        if trace { configuration.tracer = BenchTracer() }
        var request = Request(url: cache && url == nil ? target.appendingPathComponent(String(NginxServer.cachedPath.dropFirst())) : target)
        if cache { configuration.cache = HTTPCache(memoryCapacity: 64 << 20) }
        if pipeline > 1 {
            configuration.pipelineDepth = pipeline
            request.httpShouldUsePipelining = true
        }
        let inFlight = connections * pipeline
        let load = ClosedLoopLoad(request: request, configuration: configuration, deliversOnEventLoop: onLoop)
        if warmup > 0 { _ = load.run(concurrency: inFlight, seconds: Double(warmup), recordLatency: false) }
        let amount = requests.map { "\($0) requests" } ?? "\(seconds) s"
        let shape = pipeline > 1 ? "\(inFlight) in flight (\(connections) connections, pipelined \(pipeline) deep)" : "\(connections) in flight"
        say("uvbench: UVNetworking only\(onLoop ? " (run-on-loop mode)" : "")\(cache ? " through a cache" : ""), \(shape) for \(amount) against \(request.url.absoluteString) (pid \(getpid()))")
        let cpuBefore = CPUTime.ofSelf()
        let result = requests.map { load.run(concurrency: inFlight, requests: $0) }
            ?? load.run(concurrency: inFlight, seconds: Double(seconds))
        let cpu = CPUTime.ofSelf() - cpuBefore
        let perRequest = cpu.total / Double(max(1, result.completed))
        say(String(format: "%.0f req/s, %d requests, %d errors, CPU %.2f µs/request (%.2f cores), ",
                     result.requestsPerSecond, result.completed, result.errors, perRequest, cpu.total / 1e6 / result.elapsed)
              + "p50 \(formatMicros(Double(result.latency.valueAtPercentile(50)) / 1e3)), "
              + "p99 \(formatMicros(Double(result.latency.valueAtPercentile(99)) / 1e3))")
        load.shutdown()
        if !result.isValid { throw InvalidRun(firstError: result.firstError, errors: result.errors) }
    }

    /// The bare loop alone, for profilers: its instructions per request are the floor the
    /// library's are compared with.
    private func runBareOnly(_ target: URL) throws {
        let client = try BareLoopClient(url: target, expectedBodyLength: NginxServer.defaultBody.utf8.count)
        if warmup > 0 { _ = try client.run(connections: connections, seconds: Double(warmup)) }
        let amount = requests.map { "\($0) requests" } ?? "\(seconds) s"
        say("uvbench: the bare libuv+llhttp loop only, \(connections) in flight for \(amount) against \(target.absoluteString) (pid \(getpid()))")
        let cpuBefore = CPUTime.ofSelf()
        let result = try client.run(connections: connections, seconds: Double(seconds), requests: requests)
        let cpu = CPUTime.ofSelf() - cpuBefore
        say(String(format: "%.0f req/s, %d requests, %d errors, CPU %.2f µs/request",
                   result.requestsPerSecond, result.completed, result.errors, cpu.total / Double(max(1, result.completed))))
        if !result.isValid { throw InvalidRun(firstError: "the bare loop got \(result.errors) bad responses or connection failures", errors: result.errors) }
    }

    // MARK: Side by side

    struct Round {
        var wrk: WrkResult
        var wrkNginxCPU: Double?
        var ours: LoadResult
        var oursCPU: CPUTime
        var oursNginxCPU: Double?
        /// The run-on-loop mode (deliversOnEventLoop), when it ran.
        var onLoop: LoadResult? = nil
        var onLoopCPU: CPUTime? = nil
        var onLoopNginxCPU: Double? = nil
        /// The bare libuv+llhttp loop, when it ran.
        var bare: BareLoopResult? = nil
        var bareCPU: CPUTime? = nil
    }

    private func runSideBySide() throws -> (markdown: String, invalid: InvalidRun?) {
        let server = try NginxServer(executable: nginx)
        defer { server.stop() }
        let load = ClosedLoopLoad(url: server.url, connections: connections)
        let onLoopLoad = skipOnLoop ? nil : ClosedLoopLoad(url: server.url, connections: connections, deliversOnEventLoop: true)
        say("uvbench: nginx (1 worker, pid \(server.masterPID)) on \(server.url.absoluteString) serving \(server.body.utf8.count) bytes")
        let bareClient = skipBare ? nil : try BareLoopClient(url: server.url, expectedBodyLength: server.body.utf8.count)
        let (results, latency) = try alternateRounds(server: server, url: server.url, load: load, onLoopLoad: onLoopLoad,
                                                     bare: bareClient)
        let allocations = allocRequests > 0 ? countAllocations(load) : nil
        let onLoopAllocations = allocRequests > 0 ? onLoopLoad.flatMap(countAllocations) : nil
        load.shutdown()
        onLoopLoad?.shutdown()

        var report = Report(rounds: results, latency: latency, allocations: allocations, connections: connections,
                            seconds: seconds, goal: goal, server: server)
        report.onLoopGoal = onLoopGoal
        report.onLoopAllocations = onLoopAllocations
        say("")
        say(report.text())
        return (report.markdown(), Self.invalidRun(results))
    }

    /// The heap an idle plain connection holds (goal: at most 4 KiB, issue #14).
    private func runIdleMemory() throws -> (markdown: String, invalid: InvalidRun?) {
        let server = try url == nil ? NginxServer(executable: nginx) : nil
        defer { server?.stop() }
        guard let target = server?.url ?? url.flatMap(URL.init(string:)) else { throw ValidationError("bad --url") }
        let idle = try IdleMemory.measure(url: target, connections: idleConnections)
        say(String(format: "uvbench: %d idle connections: %.0f bytes of heap each (goal ≤ 4096)", idle.connections, idle.bytesPerConnection))
        return (idle.markdown(goal: 4096), nil)
    }

    /// uvfetch against wrk on one URL (goal: at least 0.8x, issue #14).
    private func runUVFetch(_ executable: String) throws -> (markdown: String, invalid: InvalidRun?) {
        let server = try NginxServer(executable: nginx)
        defer { server.stop() }
        let bench = UVFetchBench(executable: executable, wrk: wrk, connections: connections, seconds: seconds, rounds: rounds)
        do {
            let results = try bench.run(url: server.url)
            return (UVFetchBench.markdown(results, goal: 0.8), nil)
        } catch let invalid as InvalidRun {
            return ("### uvfetch --repeat against wrk\n\nINVALID: \(invalid.description)\n", invalid)
        }
    }

    /// A run is invalid when any UVNetworking request failed or got the wrong response.
    static func invalidRun(_ rounds: [Round]) -> InvalidRun? {
        let errors = rounds.reduce(0) { $0 + $1.ours.errors + ($1.onLoop?.errors ?? 0) + ($1.bare?.errors ?? 0) }
        let first = rounds.compactMap {
            $0.ours.firstError ?? $0.onLoop?.firstError ?? (($0.bare?.errors ?? 0) > 0 ? "the bare loop got bad responses" : nil)
        }.first
        return errors > 0 ? InvalidRun(firstError: first, errors: errors) : nil
    }

    /// The warm-ups, then `rounds` rounds of wrk then UVNetworking (then UVNetworking in the
    /// run-on-loop mode, with `onLoopLoad`, then the bare loop, with `bare`) on `url`, each for `seconds`.
    func alternateRounds(server: NginxServer, url: URL, load: ClosedLoopLoad,
                         onLoopLoad: ClosedLoopLoad? = nil, bare: BareLoopClient? = nil) throws -> ([Round], Histogram<UInt64>) {
        say("uvbench: \(rounds) rounds x \(seconds) s of each client, alternating, \(connections) in flight; warm-up \(warmup) s each")

        if warmup > 0 {
            _ = try Wrk.run(executable: wrk, url: url, connections: connections, seconds: warmup)
            for warming in [load] + (onLoopLoad.map { [$0] } ?? []) {
                let warm = warming.run(concurrency: connections, seconds: Double(warmup), recordLatency: false)
                guard warm.isValid else { throw InvalidRun(firstError: warm.firstError, errors: warm.errors) }
            }
            _ = try bare?.run(connections: connections, seconds: Double(warmup))
        }

        var results: [Round] = []
        var latency: Histogram<UInt64>?
        for index in 1...rounds {
            let nginxBeforeWrk = server.workerPID.flatMap(CPUTime.ofProcess)
            let wrkResult = try Wrk.run(executable: wrk, url: url, connections: connections, seconds: seconds)
            let nginxAfterWrk = server.workerPID.flatMap(CPUTime.ofProcess)

            let cpuBefore = CPUTime.ofSelf()
            let ours = load.run(concurrency: connections, seconds: Double(seconds))
            let oursCPU = CPUTime.ofSelf() - cpuBefore
            let nginxAfterOurs = server.workerPID.flatMap(CPUTime.ofProcess)

            var round = Round(wrk: wrkResult,
                              wrkNginxCPU: zip2(nginxAfterWrk, nginxBeforeWrk).map { ($0 - $1).total },
                              ours: ours, oursCPU: oursCPU,
                              oursNginxCPU: zip2(nginxAfterOurs, nginxAfterWrk).map { ($0 - $1).total })
            var onLoopNote = ""
            if let onLoopLoad {
                let cpuBefore = CPUTime.ofSelf()
                let onLoop = onLoopLoad.run(concurrency: connections, seconds: Double(seconds))
                round.onLoopCPU = CPUTime.ofSelf() - cpuBefore
                round.onLoop = onLoop
                round.onLoopNginxCPU = zip2(server.workerPID.flatMap(CPUTime.ofProcess), nginxAfterOurs).map { ($0 - $1).total }
                onLoopNote = String(format: "   on loop %9.0f req/s", onLoop.requestsPerSecond)
                    + (onLoop.errors > 0 ? " (\(onLoop.errors) ERRORS)" : "")
                    + String(format: "   ratio %.3f", onLoop.requestsPerSecond / wrkResult.requestsPerSecond)
            }
            if let bare {
                let cpuBefore = CPUTime.ofSelf()
                let result = try bare.run(connections: connections, seconds: Double(seconds))
                round.bareCPU = CPUTime.ofSelf() - cpuBefore
                round.bare = result
                onLoopNote += String(format: "   bare loop %9.0f req/s", result.requestsPerSecond)
                    + (result.errors > 0 ? " (\(result.errors) ERRORS)" : "")
                    + String(format: "   ratio %.3f", result.requestsPerSecond / wrkResult.requestsPerSecond)
            }
            results.append(round)
            if latency == nil { latency = ours.latency } else { latency!.add(ours.latency) }
            let wrkNote = wrkResult.errors > 0 ? " (\(wrkResult.errors) errors)" : ""
            let oursNote = ours.errors > 0 ? " (\(ours.errors) ERRORS)" : ""
            say(String(format: "  round %d: wrk %9.0f req/s", index, wrkResult.requestsPerSecond) + wrkNote
                  + String(format: "   UVNetworking %9.0f req/s", ours.requestsPerSecond) + oursNote
                  + String(format: "   ratio %.3f", ours.requestsPerSecond / wrkResult.requestsPerSecond) + onLoopNote)
        }
        return (results, latency!)
    }

    /// Counts malloc-family calls, across every thread of this process, over `allocRequests`
    /// requests with the usual concurrency (connections already open and warm).
    func countAllocations(_ load: ClosedLoopLoad) -> AllocationCount? {
        // Self-test: does this binary's malloc see the Swift runtime's allocations?
        uvbench_alloc_counter_reset()
        uvbench_alloc_counter_enable(1)
        let probe = [Int](repeating: 1, count: 1000)
        uvbench_alloc_counter_enable(0)
        withExtendedLifetime(probe) {}
        guard uvbench_alloc_counter_read().allocations > 0 else {
            say("uvbench: malloc is not interposed in this binary; allocations not counted")
            return nil
        }
        // Wait for the completion queue and the pool to be quiet, then count.
        uvbench_alloc_counter_reset()
        uvbench_alloc_counter_enable(1)
        let result = load.run(concurrency: connections, requests: allocRequests, recordLatency: false)
        uvbench_alloc_counter_enable(0)
        let counts = uvbench_alloc_counter_read()
        return AllocationCount(requests: result.completed, allocations: Int(counts.allocations),
                               reallocations: Int(counts.reallocations), frees: Int(counts.frees), bytes: Int(counts.bytes),
                               errors: result.errors)
    }
}

struct InvalidRun: Error, CustomStringConvertible {
    var firstError: String?
    var errors: Int
    var description: String {
        "INVALID RUN: \(errors) UVNetworking request(s) failed or returned the wrong response; first: \(firstError ?? "?")"
    }
}

struct AllocationCount {
    var requests: Int
    var allocations: Int
    var reallocations: Int
    var frees: Int
    var bytes: Int
    var errors: Int
    func perRequest(_ value: Int) -> Double { Double(value) / Double(max(1, requests)) }
}

/// print, flushed at once (stdout is a pipe under run.sh).
func say(_ text: String) {
    print(text)
    fflush(nil)
}
