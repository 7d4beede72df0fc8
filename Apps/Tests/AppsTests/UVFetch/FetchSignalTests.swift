import Foundation
import Synchronization
import Testing
import UVFetchCore

/// SIGTERM and ^C (SIGINT) sent to the `uvfetch` process mid-run: the summary of what finished
/// on stderr, whole lines on stdout, the shell's code for the signal; and ^C works while stdout
/// is a pipe nobody reads.
@Suite(.tags(.childProcess), .serialized) struct FetchSignalTests {
    /// Waits up to `timeout` seconds for `process` to exit; kills it if it does not.
    private func waitForExit(_ process: Process, timeout: Double) -> Bool {
        let exited = waitUntil(timeout: timeout) { !process.isRunning }
        if !exited {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        return exited
    }

    @Test(arguments: [(SIGTERM, "terminated", ExitStatus.terminated), (SIGINT, "interrupted", ExitStatus.interrupted)])
    func aSignalPrintsTheSummarySoFarAndLeavesWholeLines(signal: Int32, word: String, status: Int32) throws {
        let server = try OutputTestServer()
        defer { server.stop() }
        let process = Process()
        process.executableURL = uvfetchExecutable
        process.arguments = ["--concurrency", "1", server.url("/a"), server.url("/b"), server.url("/c"), server.url("/slow")]
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // One at a time: once /slow is asked for, the three before it are done.
        #expect(waitUntil(timeout: 10) { server.counts.slow.load(ordering: .relaxed) == 1 })
        usleep(300_000)
        kill(process.processIdentifier, signal)
        let exited = waitForExit(process, timeout: 10)
        let out = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let err = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(exited)
        #expect(process.terminationReason == .exit && process.terminationStatus == status, "\(process.terminationReason) \(process.terminationStatus) \(err)")
        let lines = out.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 4 && out.hasSuffix("\n"), "three whole lines: \(out)")
        #expect(lines.dropLast().allSatisfy { $0.hasPrefix("200 ") && $0.hasSuffix(" ok") }, "\(out)")
        #expect(err.contains("uvfetch: \(word)\n3 requests in "), "\(err)")
    }

    /// The reader of stdout never reads: uvfetch is stuck writing a line when ^C comes, and
    /// exits all the same, within the bounded wait.
    @Test func controlCEndsARunBlockedOnAFullPipe() throws {
        let server = try OutputTestServer()
        defer { server.stop() }
        let list = temporaryFile("urls.txt"), errorFile = temporaryFile("stderr.txt")
        defer {
            try? FileManager.default.removeItem(at: list)
            try? FileManager.default.removeItem(at: errorFile)
        }
        try Data((0..<5000).map { server.url("/item/\($0)") + "\n" }.joined().utf8).write(to: list)
        _ = FileManager.default.createFile(atPath: errorFile.path, contents: nil)
        let process = Process()
        process.executableURL = uvfetchExecutable
        process.arguments = ["--concurrency", "4", "-i", list.path]
        let output = Pipe()  // never read
        process.standardOutput = output
        process.standardError = try FileHandle(forWritingTo: errorFile)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Stalled: the pipe is full and no request has been sent for a while.
        var last = -1
        let stalled = waitUntil(timeout: 30) {
            usleep(300_000)
            let now = server.counts.requests.load(ordering: .relaxed)
            defer { last = now }
            return now > 100 && now == last
        }
        #expect(stalled)
        let sent = monotonicSeconds()
        kill(process.processIdentifier, SIGINT)
        let exited = waitForExit(process, timeout: 8)
        let seconds = monotonicSeconds() - sent
        let err = (try? String(contentsOf: errorFile, encoding: .utf8)) ?? ""
        #expect(exited && seconds < 5, "exited: \(exited) after \(seconds) s")
        #expect(process.terminationReason == .exit && process.terminationStatus == ExitStatus.interrupted,
                "\(process.terminationReason) \(process.terminationStatus) \(err)")
        #expect(err.contains("uvfetch: interrupted\n"), "\(err)")
        #expect(err.contains(" requests in "), "\(err)")
        try? output.fileHandleForReading.close()
    }
}
