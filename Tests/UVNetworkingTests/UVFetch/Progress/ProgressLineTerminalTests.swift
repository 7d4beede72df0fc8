import Foundation
import Testing
import UVFetchCore

/// The progress line on a real pseudo-terminal: `uvfetch` runs inside a private tmux server and
/// the test reads the screen with `capture-pane` (what a person would see) and the raw bytes
/// with `pipe-pane`.
@Suite(.serialized) struct ProgressLineTerminalTests {
    /// A detached tmux session on a private server and socket, so no user's tmux is touched.
    private final class TmuxSession {
        let server: SupervisedProcess
        let socket: String
        let name = "uvfetch"

        init(width: Int, command: String) throws {
            // The server runs in the foreground (-D) under the tests' supervisor, which stops it
            // even if the test dies. Started as a daemon by a client instead, it would inherit
            // that client's pipes and keep them open for its whole life.
            let directory = try TestServers.makeTemporaryDirectory(prefix: "tmux")
            socket = directory + "/tmux.sock"
            server = try SupervisedProcess.launch(["/usr/bin/tmux", "-S", socket, "-D"], directory: directory)
            let deadline = monotonicSeconds() + 10
            while !FileManager.default.fileExists(atPath: socket) && monotonicSeconds() < deadline { usleep(20_000) }
            try tmux(["new-session", "-d", "-x", "\(width)", "-y", "30", "-s", name, command])
        }

        deinit { server.release() }

        /// The screen as text, one line per row.
        func screen() throws -> String { try tmux(["capture-pane", "-p", "-t", name]) }

        /// Types keys into the pane, as a person would (`C-c` for ^C).
        func sendKeys(_ keys: String) throws { try tmux(["send-keys", "-t", name, keys]) }

        /// Appends everything the pane prints from now on to `file`, escapes included.
        func recordRawOutput(to file: String) throws { try tmux(["pipe-pane", "-o", "-t", name, "cat >> '\(file)'"]) }

        /// Polls the screen until `condition` holds, for up to `timeout` seconds.
        func waitForScreen(timeout: Double = 20, _ condition: (String) -> Bool) throws -> String {
            let deadline = monotonicSeconds() + timeout
            var last = ""
            while monotonicSeconds() < deadline {
                last = try screen()
                if condition(last) { return last }
                usleep(50_000)
            }
            return last
        }

        @discardableResult
        private func tmux(_ arguments: [String]) throws -> String {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/tmux")
            process.arguments = ["-S", socket] + arguments
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return String(decoding: data, as: UTF8.self)
        }
    }

    /// Three URLs fetched one at a time, the second taking two seconds: long enough for the line
    /// to be on screen at "1/3 done" while it waits.
    private func slowList() throws -> String {
        let base = try TestServers.httpbin().baseURL
        let file = temporaryFile("urls.txt")
        try Data("\(base)/get\n\(base)/delay/2\n\(base)/status/204\n".utf8).write(to: file)
        return file.path
    }

    @Test func isDrawnInPlaceWhileFetchingAndClearedAtTheEnd() throws {
        let list = try slowList()
        let session = try TmuxSession(width: 120, command: "'\(uvfetchExecutable.path)' --concurrency 1 -i '\(list)'; echo EXIT=$?; sleep 60")
        let during = try session.waitForScreen { $0.contains("1/3 done") }
        let progressRows = during.split(separator: "\n").filter { $0.contains(" done ") }
        #expect(progressRows.count == 1, "one progress line, redrawn in place: \(during)")
        #expect(progressRows.first?.hasPrefix("1/3 done") == true)
        #expect(progressRows.first?.contains("0 errors") == true)
        #expect(progressRows.first?.contains("ETA ") == true)
        // The finished URL's line sits above the progress line, whole.
        #expect(during.split(separator: "\n").contains { $0.hasPrefix("200 ") && $0.hasSuffix("/get ok") })

        let after = try session.waitForScreen { $0.contains("EXIT=") }
        #expect(after.contains("EXIT=0"))
        #expect(after.contains("3 requests in "))
        #expect(!after.contains(" done "), "the progress line is cleared before the summary: \(after)")
    }

    @Test func isCutToTheTerminalWidth() throws {
        let list = try slowList()
        let session = try TmuxSession(width: 12, command: "'\(uvfetchExecutable.path)' --concurrency 1 -i '\(list)'; sleep 60")
        // Cut to width - 1, so it never wraps onto a second row that `\r` cannot go back to.
        let during = try session.waitForScreen { $0.contains("1/3 done") }
        let rows = during.split(separator: "\n", omittingEmptySubsequences: false)
        let index = try #require(rows.firstIndex { $0.hasPrefix("1/3 done") })
        #expect(rows[index].count == 11)
        #expect(rows[(index + 1)...].allSatisfy { $0.isEmpty }, "nothing wrapped: \(during)")
    }

    @Test func quietDrawsNoProgressLine() throws {
        let list = try slowList()
        let raw = temporaryFile("pane.log").path
        defer { try? FileManager.default.removeItem(atPath: raw) }
        // The pause lets pipe-pane attach before uvfetch prints anything.
        let session = try TmuxSession(width: 120, command: "sleep 1; '\(uvfetchExecutable.path)' --quiet --concurrency 1 -i '\(list)'; echo EXIT=$?; sleep 60")
        try session.recordRawOutput(to: raw)
        let after = try session.waitForScreen { $0.contains("EXIT=") }
        #expect(after.contains("EXIT=0"))
        let bytes = try String(contentsOfFile: raw, encoding: .utf8)
        #expect(bytes.contains("3 requests in "))
        #expect(!bytes.contains("\u{1B}[2K") && !bytes.contains(" done "), "no progress line with --quiet: \(bytes)")
    }

    @Test func controlCPrintsTheSummarySoFarAndExits130() throws {
        let base = try TestServers.httpbin().baseURL
        let list = temporaryFile("urls.txt")
        defer { try? FileManager.default.removeItem(at: list) }
        try Data("\(base)/get\n\(base)/delay/10\n\(base)/delay/10\n".utf8).write(to: list)
        let session = try TmuxSession(width: 120, command: "'\(uvfetchExecutable.path)' --concurrency 1 -i '\(list.path)'; echo EXIT=$?; sleep 60")
        _ = try session.waitForScreen { $0.contains("1/3 done") }
        try session.sendKeys("C-c")
        let after = try session.waitForScreen { $0.contains("EXIT=") }
        #expect(after.contains("EXIT=\(ExitStatus.interrupted)"), "\(after)")
        #expect(after.contains("uvfetch: interrupted\n1 requests in "))
        #expect(after.contains("1 succeeded, 0 failed"))
        #expect(!after.contains(" done "), "the progress line is cleared: \(after)")
    }
}
