// swift-tools-version: 6.2
import PackageDescription

// The programs built on the library: uvfetch (the batch fetcher, its PostgreSQL queue) and the
// example service. A package of their own so that a package depending on UVNetworking resolves
// only what the library builds: argument-parser, hdrhistogram, postgres-nio (with swift-nio and
// swift-nio-ssl) and swift-prometheus are resolved here, never there (docs/architecture.md,
// "Packages"). `make demo` and `make test` build it.
let package = Package(
    name: "UVNetworkingApps",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "uvfetch", targets: ["uvfetch"]),
        // uvfetch's logic, for the fuzz harnesses of its input parsers (Fuzz/).
        .library(name: "UVFetchCore", targets: ["UVFetchCore"]),
    ],
    dependencies: [
        .package(name: "UVNetworking", path: ".."),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        // Only the example service's metrics backend.
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // Only `uvfetch queue` and `uvfetch worker` (UVFetchQueue).
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        // For `sslmode=require` and the verify modes of the queue's database connection.
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
    ],
    targets: [
        // zlib (gzip members) and libcrypto (SHA-1 digests) for the WARC writer and reader.
        .systemLibrary(name: "CWARC", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev", "libssl-dev"])]),
        // uvfetch's logic, a library so the tests can drive it; the executable only parses.
        .target(
            name: "UVFetchCore",
            dependencies: [
                "CWARC",
                .product(name: "UVNetworking", package: "UVNetworking"),
                .product(name: "UVHTTP1", package: "UVNetworking"),
                .product(name: "LoopbackHTTPServer", package: "UVNetworking"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "HeapModule", package: "swift-collections"),
            ]
        ),
        // The URL queue in PostgreSQL that `uvfetch queue` fills and `uvfetch worker` drains:
        // the only target that links PostgresNIO, so UVFetchCore stays free of it.
        .target(
            name: "UVFetchQueue",
            dependencies: [
                "UVFetchCore",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "uvfetch",
            dependencies: [
                "UVFetchCore",
                "UVFetchQueue",
                .product(name: "UVNetworking", package: "UVNetworking"),
                .product(name: "LoopbackHTTPServer", package: "UVNetworking"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // An example service (no web framework): a ServiceGroup that fetches URLs periodically,
        // logs, traces, measures (Prometheus) and drains its session on SIGTERM. Built and run by
        // the tests; not a product.
        .executableTarget(
            name: "uvnetworking-example-service",
            dependencies: [
                .product(name: "UVNetworking", package: "UVNetworking"),
                .product(name: "UVNetworkingServiceLifecycle", package: "UVNetworking"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            path: "Examples/ExampleService"
        ),
        // The world around a uvfetch under test (an HTTP server, a scripted DNS server), run by
        // the tests as a child process, often inside a network namespace of their own.
        .executableTarget(
            name: "uvfetch-test-world",
            dependencies: [
                .product(name: "LoopbackHTTPServer", package: "UVNetworking"),
                .product(name: "LoopbackDNSServer", package: "UVNetworking"),
            ],
            path: "Tests/TestWorld"
        ),
        // uvfetch and the example service end to end, and uvfetch's logic. Support/ holds
        // links to the library's test support (Tests/UVNetworkingTests/Support): one source, two
        // test targets, since a test target cannot depend on another package's tests.
        .testTarget(
            name: "AppsTests",
            dependencies: [
                "UVFetchCore", "uvfetch", "uvnetworking-example-service", "uvfetch-test-world",
                .product(name: "UVNetworking", package: "UVNetworking"),
                .product(name: "UVHTTP1", package: "UVNetworking"),
                .product(name: "LoopbackHTTPServer", package: "UVNetworking"),
                .product(name: "LoopbackDNSServer", package: "UVNetworking"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // The queue against a throwaway PostgreSQL cluster that the tests start (initdb, pg_ctl).
        .testTarget(
            name: "UVFetchQueueTests",
            dependencies: [
                "UVFetchQueue", "UVFetchCore", "uvfetch",
                .product(name: "LoopbackHTTPServer", package: "UVNetworking"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
