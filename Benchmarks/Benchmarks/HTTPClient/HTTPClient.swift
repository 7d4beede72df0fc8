// UVNetworking's task model under ordo-one/benchmark: batches of keep-alive GETs against a private
// nginx (one worker, 12-byte body) that the benchmark's setup starts and its teardown stops.
//
//   swift package --package-path Benchmarks benchmark
//
// One iteration is one batch; `throughput` is batches per second (×1,000 = requests per second,
// also reported as the custom metric `requests/s`), and the malloc counts are per batch (÷1,000 =
// per request). Connections are opened and warmed in setup, so a batch measures steady-state
// keep-alive traffic.

import Benchmark
import BenchSupport
import Foundation
import UVNetworking

/// The server and the client shared by one benchmark's iterations.
final class Fixture: @unchecked Sendable {
    let server: NginxServer
    let load: ClosedLoopLoad

    init(connections: Int) throws {
        server = try NginxServer()
        load = ClosedLoopLoad(url: server.url, connections: connections)
        // Open every connection and warm the allocator and the caches.
        let warm = load.run(concurrency: connections, requests: 20 * connections + 2_000, recordLatency: false)
        guard warm.isValid else { throw BenchError("warm-up failed: \(warm.firstError ?? "no completions")") }
    }

    func stop() {
        load.shutdown()
        server.stop()
    }
}

/// The fixture of the benchmark that is running (the runner runs one benchmark at a time).
nonisolated(unsafe) var fixture: Fixture?

let batchSize = 1_000
let requestsPerSecond = BenchmarkMetric.custom("requests/s", polarity: .prefersLarger, useScalingFactor: false)
let latencyP99 = BenchmarkMetric.custom("batch p99 latency (µs)", polarity: .prefersSmaller, useScalingFactor: false)

func runBatch(_ benchmark: Benchmark, concurrency: Int) {
    guard let fixture else {
        benchmark.error("no fixture: setup did not run")
        return
    }
    for _ in benchmark.scaledIterations {
        let result = fixture.load.run(concurrency: concurrency, requests: batchSize)
        guard result.isValid, result.completed == batchSize else {
            benchmark.error("\(result.errors) of \(result.completed) requests failed; first: \(result.firstError ?? "?")")
            return
        }
        benchmark.measurement(requestsPerSecond, Int(result.requestsPerSecond))
        benchmark.measurement(latencyP99, Int(result.latency.valueAtPercentile(99) / 1_000))
        blackHole(result)
    }
}

let benchmarks: @Sendable () -> Void = {
    let metrics: [BenchmarkMetric] = [
        .wallClock, .throughput, .cpuTotal, .mallocCountTotal, requestsPerSecond, latencyP99,
    ]
    let configuration = Benchmark.Configuration(
        metrics: metrics,
        timeUnits: .microseconds,
        warmupIterations: 3,
        scalingFactor: .one,
        maxDuration: .seconds(5),
        maxIterations: 200
    )

    Benchmark("GET x1000, keep-alive, 64 in flight", configuration: configuration) { benchmark in
        runBatch(benchmark, concurrency: 64)
    } setup: {
        fixture = try Fixture(connections: 64)
    } teardown: {
        fixture?.stop()
        fixture = nil
    }

    Benchmark("GET x1000, keep-alive, 1 in flight", configuration: configuration) { benchmark in
        runBatch(benchmark, concurrency: 1)
    } setup: {
        fixture = try Fixture(connections: 1)
    } teardown: {
        fixture?.stop()
        fixture = nil
    }
}
