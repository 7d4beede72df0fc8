import Foundation
import Synchronization
import Testing
import UVFetchCore

/// The built `uvfetch` executable: exit codes, stdin input and JSON Lines on stdout.
@Suite(.tags(.nginx), .serialized) struct UVFetchCommandTests {
    private func run(_ arguments: [String], stdin: String? = nil) throws -> UVFetchResult {
        try runUVFetch(arguments, stdin: stdin)
    }

    @Test func exitsZeroWhenAllSucceedAndOneWhenSomeFail() throws {
        let base = try TestServers.nginx().baseURL
        let good = try run(["\(base)/hello", "\(base)/no-content"])
        #expect(good.status == ExitStatus.success)
        #expect(good.stdout.contains("2 requests in "))
        // A pipe is not a terminal: no progress line, not even a carriage return.
        #expect(!good.stdout.contains("\r") && !good.stdout.contains("\u{1B}"))
        let bad = try run(["--quiet", "\(base)/hello", "\(base)/missing"])
        #expect(bad.status == ExitStatus.someFailed)
        #expect(bad.stdout.hasPrefix("2 requests in "))
        #expect(bad.stdout.contains("1 succeeded, 1 failed"))
    }

    @Test func usageErrorsAndUnreadableInputExit64() throws {
        let missing = try run(["-i", "/nonexistent/urls.txt"])
        #expect(missing.status == ExitStatus.usage)
        #expect(missing.stderr.contains("uvfetch: cannot read /nonexistent/urls.txt"))
        let unwritable = try run(["--jsonl", "/nonexistent/dir/out.jsonl", "http://127.0.0.1/"])
        #expect(unwritable.status == ExitStatus.usage)
        #expect(unwritable.stderr.contains("uvfetch: cannot create /nonexistent/dir/out.jsonl"))
        #expect(try run([]).status == ExitStatus.usage)
        #expect(try run(["--concurrency", "0", "http://127.0.0.1/"]).status == ExitStatus.usage)
        #expect(try run(["--max-connections", "0", "http://127.0.0.1/"]).status == ExitStatus.usage)
        #expect(try run(["-H", "broken", "http://127.0.0.1/"]).status == ExitStatus.usage)
    }

    @Test func readsStdinAndWritesJSONLinesToStdout() throws {
        let base = try TestServers.nginx().baseURL
        let list = "# from stdin\n\(base)/hello\n\nnonsense\n\(base)/no-content\n"
        let result = try run(["-i", "-", "--jsonl", "-"], stdin: list)
        #expect(result.status == ExitStatus.someFailed)  // the malformed line
        #expect(result.stderr.contains("uvfetch: line 4: not an http(s) URL: nonsense"))
        #expect(result.stderr.contains("2 requests in "))
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 2)
        for line in lines {
            let record = try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect((record["status"] as? Int).map { (200..<300).contains($0) } == true)
        }
    }

    @Test func stdinIsFetchedWhileItIsStillOpen() throws {
        // A list read whole before fetching would print nothing until stdin closes.
        let base = try TestServers.nginx().baseURL
        let process = Process()
        process.executableURL = uvfetchExecutable
        process.arguments = ["-i", "-", "--jsonl", "-"]
        let output = Pipe(), input = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = input
        try process.run()
        input.fileHandleForWriting.write(Data("\(base)/hello\n".utf8))
        let firstRecord = Mutex(Data())
        let arrived = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            let data = output.fileHandleForReading.availableData
            firstRecord.withLock { $0 = data }
            arrived.signal()
        }
        let inTime = arrived.wait(timeout: .now() + 10) == .success
        try input.fileHandleForWriting.close()
        if !inTime { arrived.wait() }
        process.waitUntilExit()
        #expect(inTime, "no record before stdin was closed")
        #expect(String(decoding: firstRecord.withLock { $0 }, as: UTF8.self).contains("\"status\":200"))
        #expect(process.terminationStatus == ExitStatus.success)
    }

    @Test func helpListsTheExitCodes() throws {
        let help = try run(["--help"])
        #expect(help.stdout.contains("Exit status: 0"))
        #expect(help.stdout.contains("64"))
    }
}
