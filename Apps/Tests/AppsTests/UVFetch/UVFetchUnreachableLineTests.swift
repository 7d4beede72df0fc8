import Foundation
import Testing

/// uvfetch's progress line end to end: uvfetch runs in the client namespace in a real
/// pseudo-terminal (tmux), fetching slowly from a server on the router's 192.0.2.1; the client's
/// link goes down and the line says "network unreachable" in place of the rate and ETA; the link
/// comes back and the line shows the rate again while the fetching goes on.
@Suite(.tags(.namespace), .serialized, .enabled(if: RouterNamespace.isAvailable && FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux"),
                             "\(RouterNamespace.unavailableReason ?? "needs tmux")"))
struct UVFetchUnreachableLineTests {
    static let total = 3_000

    /// The progress row of a screen (the only row with " done ").
    private func progressRow(_ screen: String) -> String? {
        screen.split(separator: "\n").last { $0.contains(" done ") }.map(String.init)
    }

    /// The count of finished URLs a progress row shows ("1,234/3,000 done ...").
    private func doneCount(_ row: String) -> Int? {
        Int(row.prefix { $0 != "/" }.filter(\.isNumber))
    }

    @Test(.timeLimit(.minutes(3)))
    func theLineSaysNetworkUnreachableWhileTheLinkIsDownAndTheRateWhenItReturns() throws {
        let namespace = try RouterNamespace()
        let server = try NamespaceProcess(namespace, .router, [TestWorld.executable.path, "serve", RouterNamespace.routerIPv4, "8080"])
        defer { _ = server.finish() }
        #expect(server.waitForLine(timeout: 20) { $0.hasPrefix("listening ") } != nil, "\(server.text)")
        let list = temporaryFile("unreachable-line.txt")
        defer { try? FileManager.default.removeItem(at: list) }
        try (0..<Self.total).map { "http://\(RouterNamespace.routerIPv4):8080/items/\($0)\n" }.joined().write(to: list, atomically: true, encoding: .utf8)
        // 20 a second: the run lasts minutes unless stopped; a request caught by the downed link
        // ends within its timeout.
        let uvfetch = namespace.execArguments(.client, [uvfetchExecutable.path, "--noproxy", "*", "--rate-per-host", "20",
                                                        "--concurrency", "4", "--timeout", "3", "-i", list.path])
        // The pause lets pipe-pane attach before uvfetch prints anything.
        let command = "sleep 1; " + uvfetch.map { "'\($0)'" }.joined(separator: " ") + "; echo EXIT=$?; sleep 60"
        let session = try TmuxSession(width: 120, command: command)
        // The raw bytes too: the screen shows the line only between a redraw and the next
        // per-URL line, so the bytes say sooner when it first read "network unreachable".
        let raw = temporaryFile("unreachable-line.log").path
        defer { try? FileManager.default.removeItem(atPath: raw) }
        try session.recordRawOutput(to: raw)
        func rawOutput() -> String { (try? String(contentsOfFile: raw, encoding: .utf8)) ?? "" }

        // Fetching: the rate is on the line.
        let fetching = try session.waitForScreen { screen in self.progressRow(screen).map { $0.contains("/s") && (self.doneCount($0) ?? 0) >= 10 } ?? false }
        let before = try #require(progressRow(fetching), "no progress line: \(fetching)")
        #expect(before.contains("/s  ") && before.contains("ETA ") && !before.contains("network unreachable"), "\(before)")

        // The link goes down: the words replace the rate and the ETA, nothing else changes.
        let down = monotonicMilliseconds()
        try namespace.setClientLink(up: false)
        _ = waitUntil(timeout: 20) { rawOutput().contains("network unreachable") }
        let drawnDown = monotonicMilliseconds() - down
        let unreachable = try session.waitForScreen { self.progressRow($0)?.contains("network unreachable") == true }
        let seenDown = monotonicMilliseconds() - down
        let row = try #require(progressRow(unreachable), "no progress line: \(unreachable)")
        #expect(row.wholeMatch(of: /[0-9,]+\/3,000 done  network unreachable  [0-9,]+ errors?/) != nil, "\(row)")
        #expect(!unreachable.split(separator: "\n").contains { $0.contains(" done ") && $0.contains("/s") }, "one line, the rate gone: \(unreachable)")

        // The link returns (default routes re-added): the rate comes back, and fetching goes on.
        let up = monotonicMilliseconds()
        let drawnBefore = rawOutput().count
        try namespace.setClientLink(up: true)
        _ = waitUntil(timeout: 20) { rawOutput().dropFirst(drawnBefore).contains { $0 == "/" } && rawOutput().dropFirst(drawnBefore).contains("/s  ") }
        let drawnUp = monotonicMilliseconds() - up
        let back = try session.waitForScreen { self.progressRow($0).map { !$0.contains("network unreachable") && $0.contains("/s  ") } ?? false }
        let seenUp = monotonicMilliseconds() - up
        let rowBack = try #require(progressRow(back), "no progress line: \(back)")
        #expect(rowBack.wholeMatch(of: /[0-9,]+\/3,000 done  [0-9,]+\/s  [0-9,]+ errors?  ETA [0-9:]+/) != nil, "\(rowBack)")
        let resumedFrom = doneCount(rowBack) ?? 0
        let later = try session.waitForScreen { self.progressRow($0).flatMap(self.doneCount).map { $0 >= resumedFrom + 10 } ?? false }
        #expect(progressRow(later).flatMap(doneCount).map { $0 >= resumedFrom + 10 } == true, "fetching goes on after the link returns: \(later)")
        #expect(progressRow(later)?.contains("network unreachable") == false)
        FileHandle.standardError.write(Data("uvfetch line: \"network unreachable\" drawn \(drawnDown) ms after link down (on screen at \(seenDown) ms), the rate drawn \(drawnUp) ms after link up (on screen at \(seenUp) ms)\n".utf8))

        try session.sendKeys("C-c")
        let after = try session.waitForScreen { $0.contains("EXIT=") }
        #expect(after.contains("EXIT="), "\(after)")
    }
}
