import Foundation
import Synchronization
import Testing
import UVFetchCore

/// `uvfetch --out-dir` stopped in the middle of a large body: nothing is left in the temporary
/// directory, whether it was interrupted (^C) or killed.
@Suite(.tags(.childProcess), .serialized) struct FetchInterruptTests {
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

/// `FetchRunner.interrupt` in-process: the requests in flight are cancelled and have ended
/// before the handler (which exits the process) runs.
@Suite(.tags(.loopback), .serialized) struct FetchRunnerInterruptTests {
    @Test func interruptCancelsTheDownloadsInFlightBeforeItsHandler() throws {
        let written = Atomic<Int>(0)
        let closedByClient = Atomic<Bool>(false)
        let server = try ScriptedServer { connection in
            _ = try connection.readRequest()
            try connection.write("HTTP/1.1 200 OK\r\nContent-Length: \(64 << 20)\r\n\r\n")
            try connection.write([UInt8](repeating: 7, count: 1 << 20))
            written.store(1, ordering: .releasing)
            if connection.waitForPeerClose(timeout: 30) { closedByClient.store(true, ordering: .releasing) }
        }
        defer { server.stop() }
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("uvfetch-interrupt-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: output) }
        var settings = FetchRunner.Settings()
        settings.printsLines = false
        let runner = FetchRunner(options: try RequestOptions.parse([]), settings: settings, writer: nil,
                                 outputDirectory: try OutputDirectory(path: output.path)) { _ in }
        let finished = DispatchSemaphore(value: 0)
        let url = "http://127.0.0.1:\(server.port)/big.bin"
        DispatchQueue.global().async {
            _ = try? runner.run(try URLInput(arguments: [url], inputPath: nil))
            finished.signal()
        }
        #expect(waitUntil(timeout: 10) { written.load(ordering: .acquiring) == 1 })
        usleep(200_000)
        let closedAtHandler = Atomic<Bool>(false)
        let handled = DispatchSemaphore(value: 0)
        runner.interrupt { _ in
            // The server notices the close on its own thread: give it a moment.
            closedAtHandler.store(waitUntil(timeout: 1) { closedByClient.load(ordering: .acquiring) }, ordering: .releasing)
            handled.signal()
        }
        #expect(handled.wait(timeout: .now() + 10) == .success)
        let closed = closedAtHandler.load(ordering: .acquiring)
        #expect(closed, "the download was still running when the handler ran")
        #expect(finished.wait(timeout: .now() + 10) == .success)
    }
}
