// swift-tools-version: 6.2
// The libFuzzer harnesses, one executable per parser. A package of their own so that the library's
// package never builds with sanitizers; Fuzz/build.sh builds them (see docs/fuzzing.md).
import PackageDescription

/// One harness: Sources/<name>/main.swift, its seeds and dictionary in corpora/<name>/, the inputs
/// that once found a bug in regressions/<name>/.
func harness(_ name: String, _ dependencies: [Target.Dependency]) -> Target {
    .executableTarget(name: name, dependencies: ["FuzzSupport"] + dependencies)
}

let library: Target.Dependency = .product(name: "UVNetworking", package: "UVNetworking")
let codec: Target.Dependency = .product(name: "UVHTTP1", package: "UVNetworking")

let package = Package(
    name: "UVNetworkingFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "UVNetworking", path: ".."),
        // uvfetch's logic (the fetch-input harness), in the programs' package.
        .package(name: "UVNetworkingApps", path: "../Apps"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
    ],
    targets: [
        .target(name: "CFuzzerDriver"),
        .target(name: "FuzzSupport", dependencies: ["CFuzzerDriver"]),
        harness("cookie-date", [library]),
        harness("response-parser", [codec]),
        harness("response-head-views", [codec, .product(name: "HTTPTypes", package: "swift-http-types")]),
        harness("request-parser", [codec]),
        harness("http1-roundtrip", [codec]),
        harness("request-encoding", [codec]),
        harness("set-cookie", [library]),
        harness("url-resolution", [library]),
        harness("redirect-planner", [library]),
        harness("query-string", [library]),
        harness("proxy-env", [library]),
        // br round trips need brotli's encoder, which the library does not link (zstd's is in the
        // libzstd the library's CZstd links); a name of its own, apart from the library's tests'.
        .systemLibrary(name: "CFuzzBrotliEncoder", pkgConfig: "libbrotlienc", providers: [.apt(["libbrotli-dev"])]),
        harness("content-decoder", [library, codec, "CFuzzBrotliEncoder"]),
        harness("pem", [library]),
        harness("pkcs12", [library]),
        harness("fetch-input", [.product(name: "UVFetchCore", package: "UVNetworkingApps")]),
        harness("http2-frames", [library, codec]),
        harness("robots-txt", [library]),
        harness("cache-policy", [library, .product(name: "HTTPTypes", package: "swift-http-types")]),
    ]
)
