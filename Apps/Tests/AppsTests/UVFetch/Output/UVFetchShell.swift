import Foundation
import Synchronization

/// Runs `script` with bash as a user's shell would, `$UVFETCH` naming the built `uvfetch` and
/// `$D` a fresh directory (removed afterwards); standard output and error are pipes the test
/// reads to their ends.
/// `warcio check` with the one complaint a correct archive gets allowed (Tests/Scripts/warc_check.py
/// says which): `python3 "$WARC_CHECK" FILE` in `runShell`'s scripts.
let warcCheckScript = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Scripts/warc_check.py").path

func runShell(_ script: String, in directory: URL? = nil) throws -> UVFetchResult {
    let folder = directory ?? temporaryFile("shell")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { if directory == nil { try? FileManager.default.removeItem(at: folder) } }
    var environment = ProcessInfo.processInfo.environment
    environment["UVFETCH"] = uvfetchExecutable.path
    environment["D"] = folder.path
    environment["WARC_CHECK"] = warcCheckScript
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/bash")
    process.arguments = ["-c", script]
    process.environment = environment
    let output = Pipe(), errors = Pipe()
    process.standardOutput = output
    process.standardError = errors
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let errorText = Mutex(Data())
    let drained = DispatchSemaphore(value: 0)
    DispatchQueue.global().async {
        let data = errors.fileHandleForReading.readDataToEndOfFile()
        errorText.withLock { $0 = data }
        drained.signal()
    }
    let out = output.fileHandleForReading.readDataToEndOfFile()
    drained.wait()
    process.waitUntilExit()
    return UVFetchResult(status: process.terminationStatus, stdout: String(decoding: out, as: UTF8.self),
                         stderr: String(decoding: errorText.withLock { $0 }, as: UTF8.self))
}

/// A keep-alive server for the shell tests: `/slow` never answers (until the client goes),
/// `/pause` answers after 300 ms, any other path at once with "ok\n".
final class OutputTestServer: Sendable {
    /// What the server has received.
    final class Counts: Sendable {
        /// Requests of any path.
        let requests = Atomic<Int>(0)
        /// `/slow` requests.
        let slow = Atomic<Int>(0)
    }

    private let server: ScriptedServer
    let counts = Counts()

    init() throws {
        let counts = self.counts
        server = try ScriptedServer { connection in
            try connection.serveKeepAlive(idleTimeout: 30) { request in
                counts.requests.add(1, ordering: .relaxed)
                if request.target == "/slow" {
                    counts.slow.add(1, ordering: .relaxed)
                    _ = connection.waitForPeerClose(timeout: 30)
                    throw CancellationError()
                }
                if request.target == "/pause" { usleep(300_000) }
                return ScriptedResponse.text("ok\n")
            }
        }
    }

    func stop() { server.stop() }

    /// `http://127.0.0.1:PORT/path`.
    func url(_ path: String) -> String { "http://127.0.0.1:\(server.port)\(path)" }
}
