import Foundation
import Synchronization
import Testing
import UVFetchCore

/// `uvfetch --out-dir` stopped in the middle of a large body: nothing is left in the temporary
/// directory, whether it was interrupted (^C) or killed.
@Suite(.serialized) struct FetchInterruptTests {
    @Test(arguments: [SIGINT, SIGKILL])
    func anInterruptedDownloadLeavesNoTemporaryFile(signal: Int32) throws {
        let written = Atomic<Int>(0)
        let server = try ScriptedServer { connection in
            _ = try connection.readRequest()
            try connection.write("HTTP/1.1 200 OK\r\nContent-Length: \(64 << 20)\r\n\r\n")
            let chunk = [UInt8](repeating: 7, count: 1 << 20)
            for _ in 0..<8 {
                try connection.write(chunk)
                written.add(chunk.count, ordering: .relaxed)
            }
            _ = connection.waitForPeerClose(timeout: 30)
        }
        defer { server.stop() }
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("uvfetch-interrupt-\(UUID().uuidString)")
        let temporary = root.appendingPathComponent("tmp"), output = root.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }

        let process = Process()
        process.executableURL = uvfetchExecutable
        process.arguments = ["--quiet", "--out-dir", output.path, "http://127.0.0.1:\(server.port)/big.bin"]
        var environment = ProcessInfo.processInfo.environment
        environment["TMPDIR"] = temporary.path
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        #expect(waitUntil(timeout: 10) { written.load(ordering: .relaxed) == 8 << 20 })
        // Time for the body to reach the download's file.
        usleep(500_000)
        kill(process.processIdentifier, signal)
        process.waitUntilExit()
        let left = (try? FileManager.default.contentsOfDirectory(atPath: temporary.path)) ?? []
        #expect(left.isEmpty, "left in TMPDIR: \(left)")
        let kept = (try? FileManager.default.contentsOfDirectory(atPath: output.path)) ?? []
        #expect(kept.isEmpty, "kept an incomplete body: \(kept)")
    }
}
