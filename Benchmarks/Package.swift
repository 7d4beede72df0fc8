// swift-tools-version: 6.1
// UVNetworking's benchmarks: a package of its own so that the library's package stays free of
// benchmark-only dependencies. `make bench` (Benchmarks/run.sh) builds and runs everything here.
import PackageDescription

let package = Package(
    name: "UVNetworkingBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "UVNetworking", path: ".."),
        // uvfetch's logic (UVFetchCore), for uvgate's per-record gate.
        .package(name: "UVNetworkingApps", path: "../Apps"),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
    ],
    targets: [
        // Counts malloc-family calls while enabled (an interposer linked into uvbench itself, so no
        // LD_PRELOAD is needed).
        .target(name: "CAllocCounter"),
        // The observability backends both uvbench and uvgate measure with: a logger, a metrics
        // factory that only counts, a tracer that does next to nothing (their own cost stays
        // out of the library's figures).
        .target(
            name: "BenchObservers",
            dependencies: [
                .product(name: "UVNetworking", package: "UVNetworking"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]
        ),
        // The per-request gates (Benchmarks/gates.sh): allocations and instructions per request,
        // plain, run-on-loop, observed and traced. Only the library, the counter and the
        // observers: no benchmark framework, so it builds in a few minutes from cold.
        .executableTarget(
            name: "uvgate",
            dependencies: [
                "CAllocCounter", "BenchObservers",
                .product(name: "UVNetworking", package: "UVNetworking"),
                .product(name: "UVFetchCore", package: "UVNetworkingApps"),
            ]
        ),
        // libuv and llhttp for the bare loop, the ceiling uvbench measures beside UVNetworking.
        .systemLibrary(name: "CBareLoop", pkgConfig: "libllhttp"),
        .target(name: "BareLoop", dependencies: ["CBareLoop"]),
        // What uvbench and the ordo-one benchmark share: a private nginx, wrk, and the closed-loop
        // load driver for the task model.
        .target(
            name: "BenchSupport",
            dependencies: [
                .product(name: "UVNetworking", package: "UVNetworking"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ]
        ),
        .executableTarget(
            name: "uvbench",
            dependencies: [
                "BenchSupport", "CAllocCounter", "BareLoop", "BenchObservers",
                .product(name: "UVNetworking", package: "UVNetworking"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // HTTP/2 side by side: h2load and the task API against a private nghttpd (issue #36).
        .executableTarget(
            name: "h2bench",
            dependencies: [
                "BenchSupport", "CAllocCounter",
                .product(name: "UVNetworking", package: "UVNetworking"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // The resolvers UVNetworking could use (uv_getaddrinfo, getaddrinfo_a, c-ares on libuv)
        // side by side against the scripted DNS server; Benchmarks/dns-resolvers.sh runs it.
        .systemLibrary(name: "CDNSBench", pkgConfig: "libcares"),
        .executableTarget(
            name: "dnsbench",
            dependencies: ["CDNSBench", .product(name: "LoopbackDNSServer", package: "UVNetworking")]
        ),
        .executableTarget(
            name: "HTTPClient",
            dependencies: [
                "BenchSupport",
                .product(name: "UVNetworking", package: "UVNetworking"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/HTTPClient",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // The serializers alone, no network: what a request's parameters cost to encode.
        .executableTarget(
            name: "Serialization",
            dependencies: [
                .product(name: "UVNetworking", package: "UVNetworking"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/Serialization",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
