// swift-tools-version: 6.2
import PackageDescription

let package = Package(
    name: "UVNetworking",
    // Linux only (README, "Supported platforms"). The macOS floor is only what Swift's
    // Synchronization types need there; macOS is not supported and nothing is tested on it.
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "UVNetworking", targets: ["UVNetworking"]),
        // The HTTP/1.1 codec alone (parsers and encoders, no I/O): for harnesses, captured
        // traffic and test servers. The client is built on the same types.
        .library(name: "UVHTTP1", targets: ["UVHTTP1"]),
        // An OpenAPI ClientTransport over a SessionManager: its own product, so that only its
        // users build swift-openapi-runtime.
        .library(name: "UVNetworkingOpenAPI", targets: ["UVNetworkingOpenAPI"]),
        // The test servers on loopback, for the programs' package (Apps/: uvfetch's demo and
        // tests) and the benchmarks': a small HTTP/1.1 server and a scripted DNS server.
        .library(name: "LoopbackHTTPServer", targets: ["LoopbackHTTPServer"]),
        .library(name: "LoopbackDNSServer", targets: ["LoopbackDNSServer"]),
        // A swift-service-lifecycle Service that drains a SessionManager at graceful shutdown:
        // a product of its own, so the library alone does not build swift-service-lifecycle.
        .library(name: "UVNetworkingServiceLifecycle", targets: ["UVNetworkingServiceLifecycle"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        // One client span per task, W3C trace context in its fields (Observability/Tracing).
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // Only for `swift package generate-documentation` (`make docs`): a plugin, linked into nothing.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
    ],
    targets: [
        // Native libraries. Only the library's loop and transport layers and LoopbackHTTPServer
        // import CUV; only UVHTTP1 (the HTTP/1.1 codec) imports CLLHTTP; only transport and
        // security import COpenSSL.
        .systemLibrary(name: "CUV", pkgConfig: "libuv", providers: [.apt(["libuv1-dev"])]),
        .systemLibrary(name: "CLLHTTP", pkgConfig: "libllhttp"),
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        // Only the transport layer's DNS resolver imports CAres (c-ares, driven by the loop).
        .systemLibrary(name: "CAres", pkgConfig: "libcares", providers: [.apt(["libc-ares-dev"])]),
        // Only the HTTP/2 layer imports CNGHTTP2 (nghttp2, driven sans-I/O on the loop).
        .systemLibrary(name: "CNGHTTP2", pkgConfig: "libnghttp2", providers: [.apt(["libnghttp2-dev"])]),
        // In the library, only the content decoder imports CZlib (gzip, deflate), CBrotli
        // (libbrotlidec: br, RFC 7932) and CZstd (libzstd: zstd, RFC 8878).
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CBrotli", pkgConfig: "libbrotlidec", providers: [.apt(["libbrotli-dev"])]),
        .systemLibrary(name: "CZstd", pkgConfig: "libzstd", providers: [.apt(["libzstd-dev"])]),
        // Only the HTTP cache's disk store imports CSQLite (its index; bodies are files).
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // libbrotlienc, for the tests only: they compress their br fixtures with brotli's own
        // encoder (zstd's is in libzstd, which CZstd already links).
        .systemLibrary(
            name: "CBrotliEncoder", path: "Tests/CBrotliEncoder", pkgConfig: "libbrotlienc",
            providers: [.apt(["libbrotli-dev"])]
        ),
        // The sans-I/O HTTP/1.1 codec: no threads, no I/O, no global mutable state.
        .target(
            name: "UVHTTP1",
            dependencies: [
                "CLLHTTP",
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        .target(
            name: "UVNetworking",
            dependencies: [
                "UVHTTP1", "CUV", "COpenSSL", "CZlib", "CBrotli", "CZstd", "CAres", "CNGHTTP2", "CSQLite",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),
        .target(
            name: "UVNetworkingOpenAPI",
            dependencies: [
                "UVNetworking",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        // A client of httpbin made by swift-openapi-generator, committed (see its README.md) so
        // that no build runs the generator; the OpenAPI transport's tests drive it.
        .target(
            name: "HTTPBinOpenAPIClient",
            dependencies: [.product(name: "OpenAPIRuntime", package: "swift-openapi-runtime")],
            path: "Tests/HTTPBinOpenAPIClient",
            exclude: ["openapi.yaml", "openapi-generator-config.yaml", "README.md"]
        ),
        // A small HTTP/1.1 server on loopback with its own libuv loop and thread: `uvfetch demo`
        // fetches from it, the tests use it as a fast server that needs nothing installed.
        // Its requests are parsed by UVHTTP1's RequestParser, the codec's own.
        .target(name: "LoopbackHTTPServer", dependencies: ["CUV", "UVHTTP1"]),
        // A scripted DNS server on loopback (UDP, a thread of its own): names answered from a
        // table with delays, NXDOMAIN, SERVFAIL or silence. For the tests and the benchmarks.
        .target(name: "LoopbackDNSServer"),
        // Ways of embedding the library that once ended the process, one per run (argv[1]): the
        // lifecycle tests run it as a child process, so a crash fails a test, not the test run.
        .executableTarget(
            name: "uvnetworking-embed-probe",
            dependencies: [
                "UVNetworking", "LoopbackHTTPServer", "LoopbackDNSServer",
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            path: "Tests/EmbedProbe"
        ),
        .target(
            name: "UVNetworkingServiceLifecycle",
            dependencies: [
                "UVNetworking",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // A ServiceGroup with the lifecycle adapter and requests in flight, stopped by SIGTERM:
        // the lifecycle tests run it as a child process.
        .executableTarget(
            name: "uvnetworking-service-probe",
            dependencies: [
                "UVNetworking", "UVNetworkingServiceLifecycle",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/ServiceProbe"
        ),
        // Every ```swift block of README.md and of the DocC articles, written out by
        // scripts/extract-snippets.py (`make snippets`) so that the build compiles them; `make test`
        // fails when they differ from the documents. Compiled, never run, and not a product.
        .target(
            name: "DocSnippets",
            dependencies: [
                "UVNetworking", "UVHTTP1", "UVNetworkingServiceLifecycle",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                // docs/tracing.md's blocks.
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            path: "Examples/DocSnippets"
        ),
        .testTarget(
            name: "UVNetworkingTests",
            dependencies: [
                "UVNetworking", "UVHTTP1", "LoopbackHTTPServer", "LoopbackDNSServer", "CLLHTTP", "COpenSSL", "uvnetworking-embed-probe",
                "UVNetworkingServiceLifecycle", "uvnetworking-service-probe",
                "UVNetworkingOpenAPI", "HTTPBinOpenAPIClient", "CZstd", "CBrotliEncoder",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ]
        ),
        .testTarget(
            name: "UVHTTP1Tests",
            dependencies: [
                "UVHTTP1", "CLLHTTP",
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            // The differential checks' inputs and the h11 script they run (read from the source tree).
            exclude: ["Differential/h11_outcome.py", "Differential/responses", "Differential/requests"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
