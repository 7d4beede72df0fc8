// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "UVNetworking",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "UVNetworking", targets: ["UVNetworking"]),
        // An OpenAPI ClientTransport over a SessionManager: its own product, so that only its
        // users build swift-openapi-runtime.
        .library(name: "UVNetworkingOpenAPI", targets: ["UVNetworkingOpenAPI"]),
        .executable(name: "uvfetch", targets: ["uvfetch"]),
        // The scripted DNS server, for the benchmarks' package.
        .library(name: "LoopbackDNSServer", targets: ["LoopbackDNSServer"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
    ],
    targets: [
        // Native libraries. Only the library's loop and transport layers and LoopbackHTTPServer
        // import CUV; only the library's response decoder and LoopbackHTTPServer's request
        // parser import CLLHTTP; only transport and security import COpenSSL.
        .systemLibrary(name: "CUV", pkgConfig: "libuv", providers: [.apt(["libuv1-dev"])]),
        .systemLibrary(name: "CLLHTTP", pkgConfig: "libllhttp"),
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        // Only the transport layer's DNS resolver imports CAres (c-ares, driven by the loop).
        .systemLibrary(name: "CAres", pkgConfig: "libcares", providers: [.apt(["libc-ares-dev"])]),
        // Only the content decoder imports CZlib.
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .target(
            name: "UVNetworking",
            dependencies: [
                "CUV", "CLLHTTP", "COpenSSL", "CZlib", "CAres",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "DequeModule", package: "swift-collections"),
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
        .target(name: "LoopbackHTTPServer", dependencies: ["CUV", "CLLHTTP"]),
        // A scripted DNS server on loopback (UDP, a thread of its own): names answered from a
        // table with delays, NXDOMAIN, SERVFAIL or silence. For the tests and the benchmarks.
        .target(name: "LoopbackDNSServer"),
        // uvfetch's logic, a library so the tests can drive it; the executable only parses.
        .target(
            name: "UVFetchCore",
            dependencies: [
                "UVNetworking", "LoopbackHTTPServer",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "DequeModule", package: "swift-collections"),
            ]
        ),
        .executableTarget(
            name: "uvfetch",
            dependencies: [
                "UVFetchCore",
                "UVNetworking",
                "LoopbackHTTPServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
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
        .testTarget(
            name: "UVNetworkingTests",
            dependencies: [
                "UVNetworking", "UVFetchCore", "LoopbackHTTPServer", "LoopbackDNSServer", "CLLHTTP", "COpenSSL", "uvnetworking-embed-probe",
                "UVNetworkingOpenAPI", "HTTPBinOpenAPIClient",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
