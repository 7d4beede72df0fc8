import Foundation
import Testing
import UVFetchCore

/// `--resume`'s reading of a `--jsonl` file, on real files: the URLs recorded, the torn end a
/// killed run leaves cut off, anything else refused with the file left as it was.
@Suite(.tags(.unit)) struct ResumableRecordsTests {
    /// A record's line as uvfetch writes it.
    static func line(_ url: String, bytes: [UInt8]? = nil, status: Int? = 200) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let record = FetchRecord(url: url, status: status, bytes: 3, timings: .init(total: 1.5), error: nil, attempts: 1,
                                 urlBase64: bytes.map { Data($0).base64EncodedString() })
        return String(decoding: try! encoder.encode(record), as: UTF8.self) + "\n"
    }

    /// A file holding `text`, removed by the caller.
    private func file(_ text: String) throws -> URL {
        try file(Data(text.utf8))
    }

    private func file(_ data: Data) throws -> URL {
        let url = temporaryFile("records.jsonl")
        try data.write(to: url)
        return url
    }

    private func contents(_ url: URL) throws -> String {
        String(decoding: try Data(contentsOf: url), as: UTF8.self)
    }

    /// The reason `ResumableRecords(path:)` gave, or nil when it did not throw `notResumable`.
    private func refusal(_ path: String) -> String? {
        do {
            _ = try ResumableRecords(path: path)
            return nil
        } catch {
            if case .notResumable(_, let reason) = error { return reason }
            return "\(error)"
        }
    }

    @Test func aMissingFileIsCreatedEmpty() throws {
        let url = temporaryFile("new.jsonl")
        defer { try? FileManager.default.removeItem(at: url) }
        let records = try ResumableRecords(path: url.path)
        #expect(records.recorded.count == 0 && records.notice == nil)
        try records.output.writeLines(Array(Self.line("http://a/1").utf8))
        #expect(try contents(url) == Self.line("http://a/1"))
    }

    @Test func recordedURLsAreReadAndNewRecordsAppended() throws {
        let old = Self.line("http://a/1") + Self.line("http://a/2", status: nil) + Self.line("http://a/3", status: 404)
        let url = try file(old)
        defer { try? FileManager.default.removeItem(at: url) }
        let records = try ResumableRecords(path: url.path)
        #expect(records.notice == nil)
        #expect(records.recorded.count == 3)
        // Failures count: a URL without a response, a 404.
        for path in ["1", "2", "3"] { #expect(records.recorded.contains(text: "http://a/\(path)", bytes: nil)) }
        #expect(!records.recorded.contains(text: "http://a/4", bytes: nil))
        try records.output.writeLines(Array(Self.line("http://a/4").utf8))
        #expect(try contents(url) == old + Self.line("http://a/4"))
    }

    @Test func aTornLastLineIsCutOff() throws {
        let whole = Self.line("http://a/1") + Self.line("http://a/2")
        let torn = String(Self.line("http://a/3").prefix(40))
        let url = try file(whole + torn)
        defer { try? FileManager.default.removeItem(at: url) }
        let records = try ResumableRecords(path: url.path)
        #expect(records.recorded.count == 2 && !records.recorded.contains(text: "http://a/3", bytes: nil))
        #expect(records.notice?.contains("removed line 3, an incomplete record (40 bytes)") == true, "\(records.notice ?? "")")
        #expect(try contents(url) == whole)
        try records.output.writeLines(Array(Self.line("http://a/3").utf8))
        #expect(try contents(url) == whole + Self.line("http://a/3"))
    }

    /// As little as one byte of a record, or a last line of zeros (a file system that lost its
    /// last block's data), or a record's start that somehow got its newline.
    @Test(arguments: ["{", "{\"attempts\":1,\"bytes\":", "\0\0\0\0\0\0\0\0", "{\"attempts\":1,\"by\n"])
    func otherTornEndsAreCutOff(tail: String) throws {
        let whole = Self.line("http://a/1")
        let url = try file(whole + tail)
        defer { try? FileManager.default.removeItem(at: url) }
        let records = try ResumableRecords(path: url.path)
        #expect(records.notice?.contains("removed line 2") == true, "\(records.notice ?? "")")
        #expect(try contents(url) == whole)
    }

    @Test func aFileHoldingOnlyATornLineBecomesEmpty() throws {
        let url = try file(String(Self.line("http://a/1").prefix(20)))
        defer { try? FileManager.default.removeItem(at: url) }
        let records = try ResumableRecords(path: url.path)
        #expect(records.recorded.count == 0 && records.notice != nil)
        #expect(try contents(url).isEmpty)
    }

    /// A whole last record without its newline is kept: it gets the newline.
    @Test func aWholeLastRecordWithoutItsNewlineGetsOne() throws {
        let text = Self.line("http://a/1") + Self.line("http://a/2")
        let url = try file(String(text.dropLast()))
        defer { try? FileManager.default.removeItem(at: url) }
        let records = try ResumableRecords(path: url.path)
        #expect(records.recorded.contains(text: "http://a/2", bytes: nil))
        #expect(records.notice?.contains("had no newline") == true)
        #expect(try contents(url) == text)
    }

    @Test func urlBase64IsTheURL() throws {
        let bytes: [UInt8] = Array("http://a/".utf8) + [0xFF, 0x20, 0x41]
        let text = String(decoding: bytes, as: UTF8.self)
        let url = try file(Self.line(text, bytes: bytes))
        defer { try? FileManager.default.removeItem(at: url) }
        let records = try ResumableRecords(path: url.path)
        #expect(records.recorded.contains(text: text, bytes: bytes))
        var other = bytes
        other[9] = 0xFE
        #expect(!records.recorded.contains(text: text, bytes: other))
        #expect(!records.recorded.contains(text: text, bytes: nil))
    }

    /// A record whose line spans many reads (a URL of 200 KB), and a torn line far longer than
    /// any record, which is not held whole to be judged.
    @Test func longLinesAreReadAcrossChunks() throws {
        let long = "http://a/" + String(repeating: "x", count: 200_000)
        var data = Data((Self.line("http://a/1") + Self.line(long)).utf8)
        let whole = data.count
        data.append(Data("{\"attempts\":1,\"bytes\":3,\"effectiveURL\":\"http://a/".utf8))
        data.append(Data(repeating: UInt8(ascii: "y"), count: 17 << 20))
        let url = try file(data)
        defer { try? FileManager.default.removeItem(at: url) }
        let records = try ResumableRecords(path: url.path)
        #expect(records.recorded.count == 2 && records.recorded.contains(text: long, bytes: nil))
        #expect(records.notice?.contains("removed line 3") == true, "\(records.notice ?? "")")
        #expect(try Data(contentsOf: url).count == whole)
    }

    /// Lines that are not records where no crash leaves them: the wrong file. Nothing changes.
    @Test(arguments: [
        ("\(ResumableRecordsTests.line("http://a/1"))not json\n\(ResumableRecordsTests.line("http://a/2"))", "line 2 is not a uvfetch record (not JSON)"),
        ("\(ResumableRecordsTests.line("http://a/1"))\n\(ResumableRecordsTests.line("http://a/2"))", "line 2 is not a uvfetch record"),
        ("{\"url\":\"http://a/1\"}\n\(ResumableRecordsTests.line("http://a/2"))", "line 1 is not a uvfetch record (no \""),
        ("\(ResumableRecordsTests.line("http://a/1")){\"attempts\":1,\"requestURL\":\"x\",\"url\":7}\n", "line 2 is not a uvfetch record (\"url\" is not"),
        ("{\"attempts\":1,\"requestURL\":\"x\",\"url\":\"x\",\"urlBase64\":\"%%\"}\n", "line 1 is not a uvfetch record (\"urlBase64\" is not base64)"),
        // JSON that starts as a record does, but is none: not a write cut short.
        ("\(ResumableRecordsTests.line("http://a/1")){\"attempts\":1}", "line 2 is not a uvfetch record (no \""),
        // A torn line followed by more: a single crash leaves one, at the end.
        ("\(ResumableRecordsTests.line("http://a/1"))\(ResumableRecordsTests.line("http://a/2").prefix(30))\n\(ResumableRecordsTests.line("http://a/3"))", "line 2 is not"),
        // The URL list given as --jsonl: its one line, with or without a newline, is kept.
        ("http://a/1\n", "line 1 is not a uvfetch record (not JSON)"),
        ("http://a/1", "line 1 is not a uvfetch record (not JSON)"),
    ])
    func aLineThatIsNotARecordRefusesTheFile(text: String, reason: String) throws {
        let url = try file(text)
        defer { try? FileManager.default.removeItem(at: url) }
        let refused = refusal(url.path)
        #expect(refused?.contains(reason) == true, "\(refused ?? "accepted")")
        #expect(try contents(url) == text)
    }

    @Test func aFIFOOrADeviceIsRefused() throws {
        let fifo = temporaryFile("fifo")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        defer { try? FileManager.default.removeItem(at: fifo) }
        #expect(refusal(fifo.path)?.contains("not a regular file") == true)
        #expect(refusal("/dev/null")?.contains("not a regular file") == true)
        #expect(refusal("-")?.contains("standard output") == true)
    }

    @Test func aDirectoryCannotBeOpened() throws {
        do {
            _ = try ResumableRecords(path: FileManager.default.temporaryDirectory.path)
            Issue.record("a directory was taken")
        } catch {
            #expect("\(error)".contains("Is a directory"), "\(error)")
        }
    }

    /// Two runs resuming one file would fetch the same URLs: the second is refused.
    @Test func aFileAnotherRunResumesIsRefused() throws {
        let url = try file(Self.line("http://a/1"))
        defer { try? FileManager.default.removeItem(at: url) }
        let first = try ResumableRecords(path: url.path)
        #expect(refusal(url.path)?.contains("another uvfetch --resume run is appending to it") == true)
        withExtendedLifetime(first) {}
    }
}
