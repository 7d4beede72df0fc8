// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "UVNetworking",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "UVNetworking", targets: ["UVNetworking"]),
        .executable(name: "uvfetch", targets: ["uvfetch"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
    ],
    targets: [
        // Native libraries. Only the loop and transport layers import CUV, only the response
        // decoder imports CLLHTTP, only transport and security import COpenSSL.
        .systemLibrary(name: "CUV", pkgConfig: "libuv", providers: [.apt(["libuv1-dev"])]),
        .systemLibrary(name: "CLLHTTP", pkgConfig: "libllhttp"),
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        // Only the content decoder imports CZlib.
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .target(
            name: "UVNetworking",
            dependencies: [
                "CUV", "CLLHTTP", "COpenSSL", "CZlib",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "DequeModule", package: "swift-collections"),
            ]
        ),
        // uvfetch's logic, a library so the tests can drive it; the executable only parses.
        .target(
            name: "UVFetchCore",
            dependencies: [
                "UVNetworking",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ]
        ),
        .executableTarget(
            name: "uvfetch",
            dependencies: [
                "UVFetchCore",
                "UVNetworking",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(
            name: "UVNetworkingTests",
            dependencies: [
                "UVNetworking", "UVFetchCore", "CLLHTTP", "COpenSSL",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
