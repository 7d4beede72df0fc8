import Foundation
import Testing
import UVFetchCore

/// Long lists cost no more memory than short ones: the input is streamed, and nothing is kept
/// per URL once its record is written.
@Suite(.serialized) struct FlatMemoryTests {
    /// Resident memory of this process in bytes (VmRSS).
    private func residentBytes(of pid: String = "self") -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else { return nil }
        return kilobytes * 1024
    }

    @Test func tenMillionLinesAreReadWithoutBeingHeld() throws {
        // Written by another thread into a pipe, so the list never exists whole anywhere: not
        // on disk, not in memory. ~330 MB of lines; holding them would show at once.
        let lines = 10_000_000
        let pipe = Pipe()
        // One block of 1,000 distinct lines, written 10,000 times: the writer costs next to
        // nothing, and the reader still parses every line.
        let block = Data((0..<1_000).map { "http://list.example/item/\($0)\n" }.joined().utf8)
        let writer = Thread {
            let handle = pipe.fileHandleForWriting
            for _ in 0..<(lines / 1_000) { handle.write(block) }
            try? handle.close()
        }
        let before = try #require(residentBytes())
        writer.start()
        let path = "/proc/self/fd/\(pipe.fileHandleForReading.fileDescriptor)"
        var count = 0
        var peak = before
        for entry in try URLInput(arguments: [], inputPath: path) {
            guard case .url = entry else { continue }
            count += 1
            if count % 500_000 == 0 { peak = max(peak, residentBytes() ?? 0) }
        }
        #expect(count == lines)
        #expect(peak - before < 32 << 20, "resident memory grew by \((peak - before) >> 20) MiB over \(lines) lines")
    }
}
