import Foundation
import Testing
import UVFetchCore

/// The progress line on a real pseudo-terminal: `uvfetch` runs inside a private tmux server and
/// the test reads the screen with `capture-pane` (what a person would see) and the raw bytes
/// with `pipe-pane`.
@Suite(.tags(.nginx), .serialized) struct ProgressLineTerminalTests {
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
