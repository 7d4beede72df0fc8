// The request serializers' own cost, no network: one iteration encodes one parameter tree.
//
//   swift package --package-path Benchmarks benchmark --target Serialization
//
// The tree is what a form or a search query sends: flat texts and numbers, a nested dictionary,
// an array and an NSNull, 24 pairs in all. On Linux every failed cast of a Swift value to a class
// (`is NSNull`) boxes the value as its Foundation twin, a dictionary or array with its elements;
// the malloc count per iteration shows whether flattening does that again.

import Benchmark
import Foundation
import UVNetworking

/// The parameters each iteration encodes.
func makeParameters() -> [String: Any] { [
    "q": "swift networking libuv",
    "page": 3,
    "per_page": 50,
    "sort": "stars",
    "order": "desc",
    "include_forks": false,
    "ratio": 0.75,
    "cursor": NSNull(),
    "filter": [
        "language": "swift",
        "license": ["mit", "apache-2.0", "bsd-3-clause"],
        "created": ["from": "2020-01-01", "to": "2026-11-28"],
        "archived": false,
    ] as [String: Any],
    "fields": ["name", "owner", "stars", "topics", "updated_at"],
    "user agent": "uvfetch/1.0 (Linux; x86_64) & more",
    "tags": Set(["a", "b", "c"]),
] }

let benchmarks: @Sendable () -> Void = {
    let configuration = Benchmark.Configuration(
        metrics: [.wallClock, .throughput, .cpuTotal, .mallocCountTotal],
        timeUnits: .microseconds,
        warmupIterations: 100,
        scalingFactor: .kilo,
        maxDuration: .seconds(3),
        maxIterations: 1_000
    )

    Benchmark("QueryString: 24 pairs, nested", configuration: configuration) { benchmark in
        let parameters = makeParameters()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(QueryString.string(from: parameters))
        }
    }
}
