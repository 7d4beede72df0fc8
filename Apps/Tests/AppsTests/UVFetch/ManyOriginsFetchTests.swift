import Foundation
import LoopbackDNSServer
import LoopbackHTTPServer
import Testing

/// uvfetch over many distinct origins under a descriptor limit (`ulimit -n`): the connection
/// budget closes idle connections to make room, and connects and look-ups that find no
/// descriptor close an idle connection and retry. The library's side of it is
/// Tests/UVNetworkingTests/EndToEnd/ManyOriginsTests.swift.
@Suite(.tags(.childProcess)) struct ManyOriginsFetchTests {
    /// Runs uvfetch on `count` distinct origins under `ulimit -n limit`.
    /// `origin` names the n-th origin (`ManyOriginsServer.origin(_:port:)` unless given).
    static func uvfetchUnderLimit(_ limit: Int, origins count: Int, port: Int, arguments: [String],
                                  origin: (Int) -> String = { _ in "" }) throws -> UVFetchResult {
        let list = temporaryFile("origins.txt")
        defer { try? FileManager.default.removeItem(at: list) }
        let named = origin(0).isEmpty ? { ManyOriginsServer.origin($0, port: port) } : origin
        try (0..<count).map { named($0) + "/items/\($0)\n" }.joined().write(to: list, atomically: true, encoding: .utf8)
        let command = "ulimit -n \(limit) && exec \"$0\" \"$@\""
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", command, uvfetchExecutable.path, "-i", list.path, "--quiet"] + arguments
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let errorData = ProcessOutput(reading: errors.fileHandleForReading)
        let out = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return UVFetchResult(status: process.terminationStatus, stdout: String(decoding: out, as: UTF8.self),
                             stderr: String(decoding: errorData.wait(), as: UTF8.self))
    }

    @Test func twelveHundredOriginsUnderTheCommonDescriptorLimitAllSucceed() throws {
        // The case: 1,200 origins, `ulimit -n 1024`, the server never closing idle
        // connections. The default budget (896 there) closes idle ones to make room.
        let (server, port) = try ManyOriginsServer.start()
        let result = try Self.uvfetchUnderLimit(1024, origins: 1_200, port: port, arguments: ["--concurrency", "64"])
        #expect(result.status == 0, "\(result.stdout.suffix(600)) \(result.stderr.suffix(600))")
        #expect(result.stdout.contains("1200 succeeded, 0 failed"), "\(result.stdout)")
        server.stop()
    }

    @Test func connectsThatFindNoDescriptorCloseAnIdleConnectionAndRetry() throws {
        // A budget far above the limit: the connects themselves fail with EMFILE, and idle
        // connections of other origins give way.
        let (server, port) = try ManyOriginsServer.start()
        let result = try Self.uvfetchUnderLimit(48, origins: 300, port: port,
                                                arguments: ["--concurrency", "8", "--max-connections", "100000"])
        #expect(result.status == 0, "\(result.stdout.suffix(600)) \(result.stderr.suffix(600))")
        server.stop()
    }

    @Test func lookUpsThatFindNoDescriptorCloseAnIdleConnectionAndRetry() throws {
        // Names answered by the scripted DNS server: each look-up needs a UDP socket, which
        // EMFILE denies once idle connections hold every descriptor; they give way as for
        // a connect.
        let (server, port) = try ManyOriginsServer.start()
        let dns = try LoopbackDNSServer()
        defer { dns.stop() }
        let count = 300
        for n in 0..<count {
            let address = ManyOriginsServer.origin(n, port: port).dropFirst("http://".count).split(separator: ":")[0]
            dns.set("o\(n).test", .init(addresses: [String(address)]))
        }
        let result = try Self.uvfetchUnderLimit(48, origins: count, port: port,
                                                arguments: ["--concurrency", "8", "--max-connections", "100000",
                                                            "--dns-servers", "127.0.0.1:\(dns.port)"],
                                                origin: { "http://o\($0).test:\(port)" })
        #expect(result.status == 0, "\(result.stdout.suffix(600)) \(result.stderr.suffix(600))")
        server.stop()
    }
}
