import Foundation
import Synchronization
import Testing
@testable import UVFetchCore
@testable import UVNetworking

/// A batch's exchanges and its records go out together: all of them, or, when the records
/// cannot be written, none of the exchanges stays in the archive and no record is delivered.
@Suite(.tags(.loopback)) struct PendingLinesTests {
    private let response = Data("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".utf8)

    private func record(_ url: String) -> FetchRecord {
        FetchRecord(url: url, status: 200, bytes: 2, timings: .init(total: 1, metrics: nil), error: nil, attempts: 1, file: nil,
                    urlBase64: nil, requestURL: url, effectiveURL: url)
    }

    /// The WARC-Type of each record in a gzip file.
    private func types(_ file: String) throws -> [String] {
        let text = String(decoding: try gunzipped(Data(contentsOf: URL(fileURLWithPath: file))), as: UTF8.self)
        return text.components(separatedBy: "\r\nWARC-Type: ").dropFirst().map { String($0.prefix { $0 != "\r\n" }) }
    }

    @Test func recordsThatCannotBeWrittenTakeTheirExchangesBack() throws {
        let archivePath = temporaryFile("pending-archive.warc.gz").path
        defer { unlink(archivePath) }
        let archive = try WARCWriter(path: archivePath)
        let delivered = Mutex<[String]>([])
        let lines = PendingLines(records: try LineOutput.open(path: "/dev/full"), archive: archive,
                                 onRecord: { record in delivered.withLock { $0.append(record.url) } })
        #expect(lines.deliversRecords)
        for name in ["a", "b", "c"] {
            let url = "http://127.0.0.1:1/\(name)"
            let record = record(url)
            lines.addURL(record, exchanges: [makeExchange(url: url, response: response)])
        }
        #expect(throws: WriteFailure.self) { try lines.flush {} }
        #expect(try types(archivePath) == ["warcinfo"])
        #expect(delivered.withLock { $0 }.isEmpty)
        #expect(lines.isEmpty)
    }

    @Test func writtenRecordsKeepTheirExchangesAndAreDelivered() throws {
        let archivePath = temporaryFile("pending-archive-ok.warc.gz").path
        let recordsPath = temporaryFile("pending-records.jsonl").path
        defer { unlink(archivePath); unlink(recordsPath) }
        let archive = try WARCWriter(path: archivePath)
        let delivered = Mutex<[String]>([])
        let lines = PendingLines(records: try LineOutput.open(path: recordsPath), archive: archive,
                                 onRecord: { record in delivered.withLock { $0.append(record.url) } })
        let urls = (0..<40).map { "http://127.0.0.1:1/\($0)?" + String(repeating: "q", count: 300) }
        for url in urls {
            let record = record(url)
            lines.addURL(record, exchanges: [makeExchange(url: url, response: response)])
        }
        try lines.flush {}
        #expect(try types(archivePath).count { $0 == "response" } == urls.count)
        #expect(try String(contentsOfFile: recordsPath, encoding: .utf8).split(separator: "\n").count == urls.count)
        #expect(delivered.withLock { $0 } == urls)
        // Everything written is committed: a forced exit now takes nothing back.
        let size = try FileManager.default.attributesOfItem(atPath: archivePath)[.size] as? Int
        archive.abandonUncommitted()
        #expect(try FileManager.default.attributesOfItem(atPath: archivePath)[.size] as? Int == size)
    }
}
