import Foundation
import Testing

/// What a package that depends on the library resolves: a probe package in a temporary folder,
/// depending on this checkout by path, resolved by SwiftPM. The library's users must not pull in
/// what only uvfetch, the example service or the benchmarks need (those live in Apps/ and
/// Benchmarks/, packages of their own); the pinned set is asserted exactly, so that a new
/// dependency of the library is a decision someone writes down here.
@Suite(.tags(.childProcess)) struct LeanGraphTests {
    /// The packages a user of UVNetworking or UVHTTP1 resolves: the library's own dependencies
    /// and theirs. SwiftPM resolves every dependency of a package's manifest, so the adapters'
    /// (swift-openapi-runtime; swift-service-lifecycle, which brings swift-async-algorithms) are
    /// resolved, though only their users build them.
    static let expected: Set<String> = [
        "swift-async-algorithms", "swift-collections", "swift-distributed-tracing", "swift-http-types",
        "swift-log", "swift-metrics", "swift-openapi-runtime", "swift-service-lifecycle",
    ]

    /// Never in a library user's graph (the programs' and the benchmarks' dependencies).
    static let forbidden: Set<String> = [
        "postgres-nio", "swift-nio", "swift-nio-ssl", "swift-crypto", "swift-prometheus",
        "swift-argument-parser", "hdrhistogram-swift", "benchmark",
    ]

    /// This checkout, four folders above this file.
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Resolves a probe package whose one target uses `product`; returns the identities of the
    /// packages SwiftPM pinned.
    static func resolve(product: String) throws -> Set<String> {
        let probe = FileManager.default.temporaryDirectory.appendingPathComponent("lean-graph-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: probe) }
        try FileManager.default.createDirectory(at: probe.appendingPathComponent("Sources/Probe"), withIntermediateDirectories: true)
        try """
            // swift-tools-version: 6.2
            import PackageDescription
            let package = Package(
                name: "Probe",
                platforms: [.macOS(.v15)],
                dependencies: [.package(name: "UVNetworking", path: "\(repository.path)")],
                targets: [.target(name: "Probe", dependencies: [.product(name: "\(product)", package: "UVNetworking")])]
            )
            """.write(to: probe.appendingPathComponent("Package.swift"), atomically: true, encoding: .utf8)
        try "import \(product)\n".write(to: probe.appendingPathComponent("Sources/Probe/Probe.swift"), atomically: true, encoding: .utf8)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["swift", "package", "--package-path", probe.path, "resolve"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw ResolveFailed(output: text) }

        let resolved = try Data(contentsOf: probe.appendingPathComponent("Package.resolved"))
        let pins = (try JSONSerialization.jsonObject(with: resolved) as? [String: Any])?["pins"] as? [[String: Any]] ?? []
        return Set(pins.compactMap { $0["identity"] as? String })
    }

    struct ResolveFailed: Error, CustomStringConvertible {
        var output: String
        var description: String { "swift package resolve failed: \(output.suffix(2000))" }
    }

    @Test(arguments: ["UVNetworking", "UVHTTP1"])
    func aUserOfTheLibraryResolvesOnlyTheLibrarysDependencies(product: String) throws {
        let pinned = try Self.resolve(product: product)
        #expect(pinned.isDisjoint(with: Self.forbidden), "resolved: \(pinned.intersection(Self.forbidden).sorted())")
        #expect(pinned == Self.expected,
                "\(pinned.count) packages; more than expected: \(pinned.subtracting(Self.expected).sorted()), fewer: \(Self.expected.subtracting(pinned).sorted())")
    }
}
