import Foundation
import Testing
import UVFetchCore

/// Long lists cost no more memory than short ones: the input is streamed, and nothing is kept
/// per URL once its record is written.
@Suite(.tags(.huge), .serialized) struct FlatMemoryTests {
    /// Resident memory of this process in bytes (VmRSS).
    private func residentBytes(of pid: String = "self") -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else { return nil }
        return kilobytes * 1024
    }

    @Test func twoMillionLinesAreReadWithoutBeingHeld() throws {
        // Written by another thread into a pipe, so the list never exists whole anywhere: not
        // on disk, not in memory. ~66 MB of lines, twice the bound below: holding them would
        // show at once, and more lines would only cost time (a debug build parses ~100k a second).
        let lines = 2_000_000
        let pipe = Pipe()
        // One block of 1,000 distinct lines, written 2,000 times: the writer costs next to
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
            if count % 100_000 == 0 { peak = max(peak, residentBytes() ?? 0) }
        }
        #expect(count == lines)
        #expect(peak - before < 32 << 20, "resident memory grew by \((peak - before) >> 20) MiB over \(lines) lines")
    }

    @Test func aHundredThousandURLsRunInFlatMemory() throws {
        // uvfetch itself on a 100,000-line list, with a JSON Lines file whose length says how far
        // it got. Memory at the end must be what it was a tenth of the way in: nothing kept per
        // URL (records, metrics, input lines) once its record is written.
        let base = try TestServers.nginx().baseURL
        let count = 100_000
        let list = temporaryFile("urls.txt"), records = temporaryFile("records.jsonl")
        defer { for file in [list, records] { try? FileManager.default.removeItem(at: file) } }
        try Data((0..<count).map { "\(base)/hello?n=\($0)\n" }.joined().utf8).write(to: list)

        let process = Process()
        process.executableURL = uvfetchExecutable
        process.arguments = ["--quiet", "-i", list.path, "--jsonl", records.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let pid = "\(process.processIdentifier)"
        var samples: [(done: Int, resident: Int)] = []
        while process.isRunning {
            // Lines written so far, estimated from the file's size (every record is alike).
            let size = (try? FileManager.default.attributesOfItem(atPath: records.path)[.size] as? Int) ?? 0
            if let resident = residentBytes(of: pid) { samples.append((size, resident)) }
            usleep(20_000)
        }
        #expect(process.terminationStatus == ExitStatus.success)
        let lines = try String(contentsOf: records, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == count)
        let finalSize = try #require(try FileManager.default.attributesOfItem(atPath: records.path)[.size] as? Int)
        let early = samples.filter { $0.done >= finalSize / 10 }.first
        let late = samples.filter { $0.done >= finalSize * 9 / 10 }
        let baseline = try #require(early?.resident, "no sample a tenth of the way in")
        let peak = try #require(late.map(\.resident).max(), "no sample near the end")
        print("uvfetch resident memory: \(baseline >> 10) KiB at 10%, peak \(peak >> 10) KiB after 90% (\(samples.count) samples)")
        #expect(peak - baseline < 8 << 20, "grew by \((peak - baseline) >> 10) KiB between 10% and the end")
    }
}
