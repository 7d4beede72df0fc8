import Foundation
import Testing
@testable import UVFetchCore

/// The scan behind `--resume`: its verdict must not depend on where its reads cut the lines
/// (Fuzz/fetch-input checks the same on any bytes).
@Suite(.tags(.unit)) struct RecordFileScanTests {
    private func scan(_ text: String, chunkSize: Int) throws -> (RecordFileScan.Tail, Int) {
        let url = temporaryFile("scan.jsonl")
        defer { try? FileManager.default.removeItem(at: url) }
        try Data(text.utf8).write(to: url)
        let descriptor = open(url.path, O_RDONLY)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        let recorded = RecordedURLs()
        let tail = try RecordFileScan.scan(descriptor, into: recorded, chunkSize: chunkSize)
        return (tail, recorded.count)
    }

    @Test(arguments: [1, 2, 7, 64, 1 << 16])
    func theVerdictDoesNotDependOnTheReadSize(_ chunkSize: Int) throws {
        let records = ResumableRecordsTests.line("https://example.com/a") + ResumableRecordsTests.line("https://example.com/b")
        let torn = records + String(ResumableRecordsTests.line("https://example.com/c").prefix(25))
        let (whole, wholeCount) = try scan(records, chunkSize: chunkSize)
        #expect(whole == .whole && wholeCount == 2)
        let (cut, cutCount) = try scan(torn, chunkSize: chunkSize)
        #expect(cut == .torn(line: 3, offset: Int64(records.utf8.count), length: 25) && cutCount == 2)
        #expect(throws: RecordFileScan.NotARecord(line: 1, reason: "not JSON")) {
            _ = try scan("not a record\n" + records, chunkSize: chunkSize)
        }
    }
}
