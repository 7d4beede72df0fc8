import Foundation
import Testing
@testable import UVFetchCore
@testable import UVNetworking

/// The writer on real files, without sockets: members, warcinfo first, rotation.
@Suite struct WARCWriterTests {
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
}
