import Foundation
import Testing
@testable import UVFetchCore
@testable import UVNetworking

/// The writer on real files, without sockets: members, warcinfo first, rotation.
@Suite(.tags(.unit)) struct WARCWriterTests {
    private func response(bodySize: Int) -> Data {
        Data("HTTP/1.1 200 OK\r\nContent-Length: \(bodySize)\r\n\r\n".utf8) + Data((0..<bodySize).map { UInt8(truncatingIfNeeded: $0 &* 31) })
    }

    /// The WARC-Type of each record in a file's uncompressed text.
    private func types(_ file: String) throws -> [String] {
        let text = String(decoding: try gunzipped(Data(contentsOf: URL(fileURLWithPath: file))), as: UTF8.self)
        return text.components(separatedBy: "\r\nWARC-Type: ").dropFirst().map { String($0.prefix { $0 != "\r\n" }) }
    }

    @Test func oneFileStartsWithWarcinfoAndHoldsEveryPair() throws {
        let directory = temporaryFile("warc-writer")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("a.warc.gz").path
        let writer = try WARCWriter(path: path, info: [("description", "test")])
        try writer.write([makeExchange(response: response(bodySize: 10)), makeExchange(response: Data())])
        try writer.write([makeExchange(response: response(bodySize: 20))])
        #expect(writer.fileNames == [path])
        #expect(try types(path) == ["warcinfo", "request", "response", "request", "response"])
    }

    @Test func filesRotateBetweenPairsAndEachStartsWithWarcinfo() throws {
        let directory = temporaryFile("warc-rotate")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("crawl.warc.gz").path
        let writer = try WARCWriter(path: path, maximumFileSize: 3_000)
        // Incompressible-ish bodies of ~1.2 KB: two pairs do not fit in 3,000 bytes with warcinfo.
        for _ in 0..<5 {
            let body = Data((0..<1_200).map { _ in UInt8.random(in: 0...255) })
            try writer.write([makeExchange(response: Data("HTTP/1.1 200 OK\r\n\r\n".utf8) + body)])
        }
        let names = writer.fileNames
        #expect(names.count >= 3, "\(names)")
        #expect(names.first == directory.appendingPathComponent("crawl-00000.warc.gz").path)
        var pairs = 0
        for name in names {
            let kinds = try types(name)
            #expect(kinds.first == "warcinfo")
            #expect(kinds.dropFirst().count % 2 == 0 && !kinds.dropFirst().isEmpty, "\(name): \(kinds)")
            pairs += kinds.dropFirst().count / 2
        }
        #expect(pairs == 5)
        // One pair larger than the maximum still gets written, in a file of its own.
        try writer.write([makeExchange(response: response(bodySize: 100_000))])
        #expect(try types(writer.fileNames.last!) == ["warcinfo", "request", "response"])
    }

    @Test func standardOutputIsRefused() throws {
        #expect(throws: FetchInputError.self) { _ = try WARCWriter(path: "-") }
    }

    private func makeDirectory(_ name: String) throws -> URL {
        let directory = temporaryFile(name)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// A new run refuses an archive an earlier run wrote, and leaves it as it was; a run told
    /// to continue appends after it, with a warcinfo of its own first.
    @Test func anExistingArchiveIsRefusedOrAppendedToNeverReplaced() throws {
        let directory = try makeDirectory("warc-append")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("a.warc.gz").path
        try WARCWriter(path: path).write([makeExchange(response: response(bodySize: 10))])
        let first = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(throws: FetchInputError.archiveExists(path: path)) { _ = try WARCWriter(path: path) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == first)
        let again = try WARCWriter(path: path, opening: .append)
        try again.write([makeExchange(response: response(bodySize: 20))])
        let both = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(both.prefix(first.count) == first)
        #expect(try types(path) == ["warcinfo", "request", "response", "warcinfo", "request", "response"])
        // An empty file is no archive: a new run takes it.
        let empty = directory.appendingPathComponent("empty.warc.gz").path
        #expect(FileManager.default.createFile(atPath: empty, contents: nil))
        _ = try WARCWriter(path: empty)
        #expect(try types(empty) == ["warcinfo"])
    }

    /// A numbered series goes on after its highest file, and a new run refuses any file of it.
    @Test func rotationContinuesAfterTheHighestNumber() throws {
        let directory = try makeDirectory("warc-append-rotate")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("crawl.warc.gz").path
        let body = { Data("HTTP/1.1 200 OK\r\n\r\n".utf8) + Data((0..<1_200).map { _ in UInt8.random(in: 0...255) }) }
        // The first run's writer is gone (its lock with it) before the second opens.
        let earlier = try {
            let first = try WARCWriter(path: path, maximumFileSize: 3_000)
            for _ in 0..<3 { try first.write([makeExchange(response: body())]) }
            return first.fileNames
        }()
        let contents = try earlier.map { try Data(contentsOf: URL(fileURLWithPath: $0)) }
        #expect(earlier.count >= 2)
        #expect(throws: FetchInputError.self) { _ = try WARCWriter(path: path, maximumFileSize: 3_000) }
        let second = try WARCWriter(path: path, maximumFileSize: 3_000, opening: .append)
        for _ in 0..<3 { try second.write([makeExchange(response: body())]) }
        let names = second.fileNames
        // It starts in the highest file there was (or the next, when that one was full).
        #expect(names.first == earlier.last || names.first == WARCFileNaming(path: path, isNumbered: true).name(serial: earlier.count))
        for (name, content) in zip(earlier.dropLast(), contents.dropLast()) {
            #expect(try Data(contentsOf: URL(fileURLWithPath: name)) == content, "\(name) was rewritten")
        }
        let all = Set(earlier + names)
        let pairs = try all.map { try types($0).count { $0 == "response" } }.reduce(0, +)
        #expect(pairs == 6)
        #expect(WARCFileNaming(path: path, isNumbered: true).existingSerials() == Array(0..<all.count))
    }

    /// A record cut short at the end (a run killed mid-write) is removed before appending, and
    /// said; a file that is not a WARC file, or is damaged inside, is refused and left alone.
    @Test func aTornTailIsCutAndAForeignFileRefused() throws {
        let directory = try makeDirectory("warc-torn")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("a.warc.gz").path
        try WARCWriter(path: path).write([makeExchange(response: response(bodySize: 10))])
        let whole = try Data(contentsOf: URL(fileURLWithPath: path))
        let member = WARCRecord(type: "resource", date: Date(), fields: [], block: Data("x".utf8)).compressed
        try (whole + member.prefix(member.count / 2)).write(to: URL(fileURLWithPath: path))
        let writer = try WARCWriter(path: path, opening: .append)
        #expect(writer.notice?.contains("removed an incomplete record (\(member.count / 2) bytes)") == true, "\(writer.notice ?? "")")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)).prefix(whole.count) == whole)
        #expect(try types(path) == ["warcinfo", "request", "response", "warcinfo"])

        for (name, bytes) in [("text", Data("not an archive\n".utf8)), ("gzip", GzipMember.compress(Data("hello".utf8))),
                              ("damaged", whole + Data([0x1F, 0x8B, 0x08, 0x00, 0xFF, 0xFF, 0xFF]) + whole)] {
            let foreign = directory.appendingPathComponent(name).path
            try bytes.write(to: URL(fileURLWithPath: foreign))
            #expect(throws: FetchInputError.self) { _ = try WARCWriter(path: foreign, opening: .append) }
            #expect(try Data(contentsOf: URL(fileURLWithPath: foreign)) == bytes, "\(name) was changed")
        }
    }

    /// Two runs never write one archive at once: the second is refused while the first has it.
    @Test func aSecondWriterOfOneFileIsRefused() throws {
        let directory = try makeDirectory("warc-lock")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("a.warc.gz").path
        let first = try WARCWriter(path: path)
        #expect(throws: FetchInputError.cannotAppend(path: path, reason: "another uvfetch run is writing to it")) {
            _ = try WARCWriter(path: path, opening: .append)
        }
        withExtendedLifetime(first) {}
    }

    /// What was written after a mark comes back off, across a rotation too; a forced exit
    /// keeps only what was committed.
    @Test func rollBackAndAbandonTakeBackWhatWasNotCommitted() throws {
        let directory = try makeDirectory("warc-rollback")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("crawl.warc.gz").path
        let body = { Data("HTTP/1.1 200 OK\r\n\r\n".utf8) + Data((0..<1_200).map { _ in UInt8.random(in: 0...255) }) }
        let writer = try WARCWriter(path: path, maximumFileSize: 3_000)
        try writer.write([makeExchange(response: body())])
        let mark = writer.mark()
        let kept = try Data(contentsOf: URL(fileURLWithPath: writer.fileNames[0]))
        for _ in 0..<4 { try writer.write([makeExchange(response: body())]) }
        #expect(writer.fileNames.count >= 3)
        writer.rollBack(to: mark)
        #expect(writer.fileNames == [writer.fileNames[0]])
        #expect(WARCFileNaming(path: path, isNumbered: true).existingSerials() == [0])
        #expect(try Data(contentsOf: URL(fileURLWithPath: writer.fileNames[0])) == kept)
        // Written on after the roll-back: the records name the file's warcinfo still.
        try writer.write([makeExchange(response: body())])
        writer.commit(writer.mark())
        let last = writer.fileNames.last!
        let committed = try Data(contentsOf: URL(fileURLWithPath: last))
        try writer.write([makeExchange(response: body())])
        // Locks the writer for good (the process is about to exit): nothing of it is read after.
        writer.abandonUncommitted()
        #expect(try Data(contentsOf: URL(fileURLWithPath: last)) == committed)
        #expect(WARCFileNaming(path: path, isNumbered: true).existingSerials().map { WARCFileNaming(path: path, isNumbered: true).name(serial: $0) }.last == last)
    }

    /// --warc-dedup: a payload archived before (here in other chunks, at another URL) makes a
    /// revisit record naming the first; empty, cut or non-2xx payloads never do; a roll back
    /// forgets the originals it took back, and rotation does not make a record a revisit of
    /// itself.
    @Test func aRepeatedPayloadIsARevisitOfTheFirst() throws {
        let directory = temporaryFile("warc-dedup")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("d.warc.gz").path
        let writer = try WARCWriter(path: path, deduplicates: true)
        let whole = Data("HTTP/1.1 200 OK\r\nContent-Length: 14\r\n\r\nhello, archive".utf8)
        let chunked = Data("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n9\r\n, archive\r\n0\r\n\r\n".utf8)
        try writer.write([makeExchange(url: "http://127.0.0.1:1/first", response: whole)])
        try writer.write([makeExchange(url: "http://127.0.0.1:1/second", response: chunked)])
        // Not deduplicated: an empty payload, a 404 of the same bytes, a payload cut short.
        let empty = Data("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n".utf8)
        let missing = Data("HTTP/1.1 404 Not Found\r\nContent-Length: 14\r\n\r\nhello, archive".utf8)
        try writer.write([makeExchange(response: empty), makeExchange(response: empty), makeExchange(response: missing),
                          makeExchange(response: whole, complete: false)])
        #expect(try types(path) == ["warcinfo", "request", "response", "request", "revisit"]
                + Array(repeating: ["request", "response"], count: 4).flatMap { $0 })

        let text = String(decoding: try gunzipped(Data(contentsOf: URL(fileURLWithPath: path))), as: UTF8.self)
        let records = text.components(separatedBy: "WARC/1.1\r\n").dropFirst()
        let first = try #require(records.first { $0.contains("WARC-Target-URI: http://127.0.0.1:1/first") && $0.contains("WARC-Type: response") })
        let revisit = try #require(records.first { $0.contains("WARC-Type: revisit") })
        let firstID = try #require(first.components(separatedBy: "WARC-Record-ID: ").last?.prefix { $0 != "\r\n" })
        #expect(revisit.contains("WARC-Refers-To: \(firstID)\r\n"))
        #expect(revisit.contains("WARC-Refers-To-Target-URI: http://127.0.0.1:1/first\r\n"))
        #expect(revisit.contains("WARC-Refers-To-Date: "))
        #expect(revisit.contains("WARC-Profile: http://netpreserve.org/warc/1.1/revisits/identical-payload-digest\r\n"))
        #expect(revisit.contains("WARC-Payload-Digest: \(WARCDigest.sha1(Data("hello, archive".utf8)))\r\n"))
        // The block is the head alone: the payload is the original's.
        #expect(revisit.hasSuffix("Transfer-Encoding: chunked\r\n\r\n\r\n\r\n"), "\(revisit.suffix(80).debugDescription)")

        // Rolled back, the original is forgotten: the same payload is archived whole again.
        let mark = writer.mark()
        try writer.write([makeExchange(url: "http://127.0.0.1:1/third", response: Data("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nxyz".utf8))])
        writer.rollBack(to: mark)
        try writer.write([makeExchange(url: "http://127.0.0.1:1/fourth", response: Data("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nxyz".utf8))])
        #expect(try types(path).suffix(2) == ["request", "response"])
    }

    @Test func aPayloadFirstSeenAsFilesRotateIsNoRevisitOfItself() throws {
        let directory = temporaryFile("warc-dedup-rotate")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let writer = try WARCWriter(path: directory.appendingPathComponent("r.warc.gz").path, maximumFileSize: 2_000, deduplicates: true)
        for index in 0..<4 {
            let body = Data((0..<1_200).map { _ in UInt8.random(in: 0...255) })
            try writer.write([makeExchange(url: "http://127.0.0.1:1/\(index)", response: Data("HTTP/1.1 200 OK\r\nContent-Length: 1200\r\n\r\n".utf8) + body)])
        }
        let kinds = try writer.fileNames.flatMap { try types($0) }
        #expect(!kinds.contains("revisit"), "\(kinds)")
        #expect(kinds.filter { $0 == "response" }.count == 4)
    }

    /// The index follows its file: lines after their records, cut back with them, and when an
    /// archive is continued, lines of records a repair cut off are dropped.
    @Test func theIndexFollowsItsFile() throws {
        let directory = temporaryFile("warc-index")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("x.warc.gz").path
        // The first run's writer, let go (with its lock on the file) at the end of the block.
        let afterFirst: String = try {
            let writer = try WARCWriter(path: path, indexes: true)
            try writer.write([makeExchange(url: "http://127.0.0.1:1/a", response: response(bodySize: 10))])
            let mark = writer.mark()
            let afterFirst = try String(contentsOfFile: path + ".cdxj", encoding: .utf8)
            #expect(afterFirst.split(separator: "\n").count == 1)
            #expect(afterFirst.hasPrefix("1,0,0,127:1)/a "))
            try writer.write([makeExchange(url: "http://127.0.0.1:1/b", response: response(bodySize: 20))])
            #expect(try String(contentsOfFile: path + ".cdxj", encoding: .utf8).split(separator: "\n").count == 2)
            writer.rollBack(to: mark)
            #expect(try String(contentsOfFile: path + ".cdxj", encoding: .utf8) == afterFirst)
            return afterFirst
        }()
        // Continued: the index is kept, and a line naming a record past the file's end (as a
        // torn record cut off would leave) is dropped.
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        let stray = "1,0,0,127:1)/gone 20260101000000 {\"url\": \"http://127.0.0.1:1/gone\", \"length\": \"9\", \"offset\": \"\(size)\", \"filename\": \"x.warc.gz\"}\n"
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path + ".cdxj"))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(stray.utf8))
        try handle.close()
        let again = try WARCWriter(path: path, opening: .append, indexes: true)
        #expect(try String(contentsOfFile: path + ".cdxj", encoding: .utf8) == afterFirst)
        try again.write([makeExchange(url: "http://127.0.0.1:1/c", response: response(bodySize: 5))])
        let lines = try String(contentsOfFile: path + ".cdxj", encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 2 && lines[1].hasPrefix("1,0,0,127:1)/c "))
    }
}
