import Foundation
import Testing
import UVFetchCore

/// `--out-dir` claims each name atomically: two `uvfetch` runs into one directory keep every
/// body, and a name already taken by anything (a dangling symlink included) is left as it is.
@Suite(.tags(.childProcess), .serialized) struct OutputDirectoryClaimTests {
    /// Answers every request with its own target as the body, so each kept file says which
    /// URL it came from.
    private func echoServer() throws -> ScriptedServer {
        try ScriptedServer { connection in
            try connection.serveKeepAlive { request in ScriptedResponse.text(request.target) }
        }
    }

    private func start(_ arguments: [String]) throws -> Process {
        let process = Process()
        process.executableURL = uvfetchExecutable
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    @Test func twoRunsIntoOneDirectoryKeepEveryBody() throws {
        let server = try echoServer()
        defer { server.stop() }
        let root = URL(fileURLWithPath: try TestServers.makeTemporaryDirectory(prefix: "uvfetch-claim"))
        defer { try? FileManager.default.removeItem(at: root) }
        let output = root.appendingPathComponent("out")
        let perRun = 400
        var expected = Set<String>()
        var runs: [Process] = []
        for run in ["a", "b"] {
            // Every URL ends in "item": all 800 bodies compete for item, item.1, item.2, ...
            let targets = (0..<perRun).map { "/\(run)/\($0)/item" }
            expected.formUnion(targets)
            let list = root.appendingPathComponent("\(run).txt")
            try Data(targets.map { "http://127.0.0.1:\(server.port)\($0)\n" }.joined().utf8).write(to: list)
            runs.append(try start(["--quiet", "--concurrency", "32", "--out-dir", output.path, "-i", list.path]))
        }
        for process in runs {
            process.waitUntilExit()
            #expect(process.terminationStatus == ExitStatus.success)
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: output.path)
        #expect(names.count == 2 * perRun)
        #expect(Set(names) == Set(["item"] + (1..<2 * perRun).map { "item.\($0)" }))
        let bodies = try names.map { try String(contentsOf: output.appendingPathComponent($0), encoding: .utf8) }
        #expect(Set(bodies) == expected, "\(expected.subtracting(bodies).count) bodies lost")
    }

    @Test func aDanglingSymlinkIsATakenNameAndStaysAsItIs() throws {
        let server = try echoServer()
        defer { server.stop() }
        let output = try TestServers.makeTemporaryDirectory(prefix: "uvfetch-claim")
        defer { try? FileManager.default.removeItem(atPath: output) }
        let link = output + "/report.txt", missing = output + "/nowhere/target.txt"
        #expect(symlink(missing, link) == 0)
        let result = try runUVFetch(["--out-dir", output, "http://127.0.0.1:\(server.port)/report.txt"])
        #expect(result.status == ExitStatus.success, "\(result.stdout)\(result.stderr)")
        #expect(try String(contentsOfFile: output + "/report.txt.1", encoding: .utf8) == "/report.txt")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == missing)
        #expect(!FileManager.default.fileExists(atPath: missing))
    }
}
