import Foundation
import Synchronization
import Testing
import UVFetchCore

/// `--data-binary @FILE` at high concurrency: the file's bytes are held neither once per request
/// in flight nor at all (a large file is streamed from the file by each request).
@Suite(.tags(.childProcess), .serialized) struct DataBinaryMemoryTests {
    /// A field of /proc/PID/status in bytes (the fields are in kB); nil once the process is gone.
    private func statusBytes(_ field: String, of pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }),
              let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else { return nil }
        return kilobytes << 10
    }

    /// Posts `file` `requests` times, all at once, to a server that reads and drops each body
    /// (after a pause, so every request is in flight together); returns uvfetch's peak resident
    /// memory.
    private func peakResidentMemory(posting file: URL, size: Int, requests: Int) throws -> Int {
        let received = Atomic<Int>(0), bodies = Atomic<Int>(0)
        let server = try ScriptedServer { connection in
            while true {
                let head = try connection.readRequestHead(timeout: 60)
                let length = Int(head.header("Content-Length") ?? "") ?? 0
                connection.pause(0.5)
                try connection.discard(length, timeout: 120)
                received.add(length, ordering: .relaxed)
                bodies.add(1, ordering: .relaxed)
                try connection.write(ScriptedResponse.text("stored"))
            }
        }
        defer { server.stop() }
        let process = Process()
        process.executableURL = uvfetchExecutable
        process.arguments = ["--quiet", "--concurrency", "\(requests)", "--repeat", "\(requests)",
                             "--data-binary", "@\(file.path)", "http://127.0.0.1:\(server.port)/upload"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        var peak = 0
        while process.isRunning {
            // The high-water mark catches what happens between two samples.
            if let high = statusBytes("VmHWM", of: process.processIdentifier) { peak = max(peak, high) }
            usleep(20_000)
        }
        process.waitUntilExit()
        #expect(process.terminationStatus == ExitStatus.success)
        #expect(bodies.load(ordering: .relaxed) == requests)
        #expect(received.load(ordering: .relaxed) == size * requests)
        return peak
    }

    @Test func aFiftyMegabyteBodyAtConcurrency32StaysInBoundedMemory() throws {
        let requests = 32, size = 50 << 20
        let small = temporaryFile("small.bin"), large = temporaryFile("large.bin")
        defer { for file in [small, large] { try? FileManager.default.removeItem(at: file) } }
        try Data(repeating: 7, count: 1000).write(to: small)
        let handle = try FileHandle(forWritingTo: { _ = FileManager.default.createFile(atPath: large.path, contents: nil); return large }())
        let chunk = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        for _ in 0..<(size >> 20) { try handle.write(contentsOf: chunk) }
        try handle.close()

        // The same run with a 1000-byte body: what uvfetch takes without a large body.
        let baseline = try peakResidentMemory(posting: small, size: 1000, requests: requests)
        let peak = try peakResidentMemory(posting: large, size: size, requests: requests)
        print("--data-binary @\(size >> 20) MiB x \(requests): uvfetch peak resident \(peak >> 20) MiB (\(baseline >> 20) MiB with 1000 bytes)")
        #expect(baseline > 0 && peak < 300 << 20, "uvfetch's resident memory peaked at \(peak >> 20) MiB")
        // Less than half the file: the file is not held, let alone once per request.
        #expect(peak - baseline < size / 2, "uvfetch's resident memory grew by \((peak - baseline) >> 20) MiB with the large body")
    }

    /// A server that reads each request's body and answers 200 when it is `expected`, 400
    /// otherwise; keep-alive. `firstRequest` runs once, when the first body has arrived.
    private func checkingServer(expecting expected: [UInt8], firstRequest: @escaping @Sendable () -> Void = {}) throws -> ScriptedServer {
        let first = Mutex(true)
        return try ScriptedServer { connection in
            try connection.serveKeepAlive { request in
                if first.withLock({ isFirst in defer { isFirst = false }; return isFirst }) { firstRequest() }
                return request.body == expected ? ScriptedResponse.text("same") : ScriptedResponse.text("different", status: 400, reason: "Bad Request")
            }
        }
    }

    @Test func aLargeFileArrivesWholeInEveryRequestEvenIfReplacedMeanwhile() throws {
        let bytes = (0..<(3 << 20) + 17).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ $0 >> 11) }
        let file = temporaryFile("body.bin")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(bytes).write(to: file)
        // Replaced by another file at the same path once the requests are going out: they
        // send the file that was opened.
        let server = try checkingServer(expecting: bytes) { try? Data("replaced".utf8).write(to: file, options: .atomic) }
        defer { server.stop() }
        let result = try runUVFetch(["--concurrency", "4", "--repeat", "12", "--data-binary", "@\(file.path)",
                                     "http://127.0.0.1:\(server.port)/upload"])
        let text = result.stdout
        #expect(result.status == ExitStatus.success, "\(text)")
        #expect(text.contains("12 requests in ") && text.contains("12 succeeded"), "\(text)")
    }

    @Test func aBodyFromAPipeIsReadOnceAndSentByEveryRequest() throws {
        let body = "from a pipe\n"
        let server = try checkingServer(expecting: Array(body.utf8))
        defer { server.stop() }
        let result = try runUVFetch(["--repeat", "3", "--data-binary", "@/dev/stdin", "http://127.0.0.1:\(server.port)/upload"],
                                    stdin: body)
        #expect(result.status == ExitStatus.success, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("3 succeeded"), "\(result.stdout)")
    }

    @Test func aDirectoryAsTheBodyIsAnInputError() throws {
        let directory = try TestServers.makeTemporaryDirectory(prefix: "uvfetch-body-dir")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try runUVFetch(["--data-binary", "@\(directory)", "http://127.0.0.1:9/"])
        #expect(result.status == ExitStatus.usage)
        #expect(result.stderr.contains("Is a directory"), "\(result.stderr)")
    }
}
