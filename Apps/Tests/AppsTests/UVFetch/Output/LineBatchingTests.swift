import Foundation
import Testing
@testable import UVFetchCore

/// A run's lines are written a batch at a time (`PendingLines`), in pieces that end with a
/// newline and fit a pipe's atomic write (`LineOutput.writeLines`).
@Suite(.tags(.childProcess)) struct LineBatchingTests {
    private func pieces(_ text: String, limit: Int) -> [String] {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBufferPointer { all in
            var pieces: [String] = []
            var start = 0
            while start < all.count {
                let end = LineOutput.pieceEnd(all, from: start, limit: limit)
                pieces.append(String(decoding: all[start..<end], as: UTF8.self))
                start = end
            }
            return pieces
        }
    }

    @Test func piecesEndAfterTheLastNewlineWithinTheLimit() {
        #expect(pieces("aa\nbb\ncc\n", limit: 7) == ["aa\nbb\n", "cc\n"])
        #expect(pieces("aa\nbb\ncc\n", limit: 9) == ["aa\nbb\ncc\n"])
        #expect(pieces("aa\nbb\ncc\n", limit: 3) == ["aa\n", "bb\n", "cc\n"])
    }

    @Test func aLineLongerThanTheLimitIsAPieceOfItsOwn() {
        #expect(pieces("a\nbbbbbbbb\nc\n", limit: 4) == ["a\n", "bbbbbbbb\n", "c\n"])
    }

    @Test func writeLinesWritesEveryLineWhole() throws {
        let file = temporaryFile("lines")
        defer { try? FileManager.default.removeItem(at: file) }
        let output = try LineOutput.open(path: file.path)
        let text = (0..<2_000).map { "line \($0) " + String(repeating: "x", count: $0 % 300) + "\n" }.joined()
        try output.writeLines(Array(text.utf8))
        #expect(try String(contentsOf: file, encoding: .utf8) == text)
    }

    /// Whether strace can trace a child here (ptrace may be refused in a sandbox).
    static let canTrace: Bool = {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/strace") else { return false }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/strace")
        process.arguments = ["-o", "/dev/null", "/bin/true"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }()

    @Test(.enabled(if: canTrace)) func theLinesOfABatchShareAWrite() throws {
        let server = try OutputTestServer()
        defer { server.stop() }
        let result = try runShell("""
            strace -f -e trace=write -o "$D/trace" "$UVFETCH" --repeat 400 \(server.url("/a")) > "$D/lines"; echo "status=$?"
            echo "lines=$(grep -c ' ok$' "$D/lines") writes=$(grep -c 'write(1,' "$D/trace")"
            """)
        #expect(result.stdout.contains("status=0"), "\(result.stdout) \(result.stderr)")
        let counts = result.stdout.split(whereSeparator: { $0 == " " || $0 == "\n" }).reduce(into: [String: Int]()) { counts, word in
            let parts = word.split(separator: "=")
            if parts.count == 2, let value = Int(parts[1]) { counts[String(parts[0])] = value }
        }
        #expect(counts["lines"] == 400, "\(result.stdout)")
        // One write per line (and one for the summary) before; a batch of lines a write now.
        let writes = try #require(counts["writes"])
        #expect(writes < 200, "\(writes) writes for 400 lines")
    }
}
