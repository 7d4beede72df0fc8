import Foundation
import Synchronization
import Testing
@testable import UVFetchCore
@testable import UVNetworking

/// --warc-dedup with a `PayloadIndex` (a fleet's): a payload archived elsewhere makes a revisit
/// of that record, and the index hears of this writer's originals only once committed.
@Suite(.tags(.unit)) struct WARCWriterSharedPayloadsTests {
    /// An index that knows what it is given, and keeps what it is told.
    private final class Index: PayloadIndex {
        let known: [String: ArchivedPayload]
        private let told = Mutex<[ArchivedPayload]>([])

        init(_ known: [ArchivedPayload]) {
            self.known = Dictionary(uniqueKeysWithValues: known.map { ($0.digest, $0) })
        }

        func original(ofPayload digest: String) -> ArchivedPayload? { known[digest] }
        func archived(_ payloads: [ArchivedPayload]) { told.withLock { $0 += payloads } }
        var archived: [ArchivedPayload] { told.withLock { $0 } }
    }

    private func ok(_ body: String) -> Data {
        Data("HTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)".utf8)
    }

    @Test func aPayloadArchivedElsewhereIsARevisitAndOriginalsAreSharedOnceCommitted() throws {
        let directory = temporaryFile("warc-shared")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("s.warc.gz").path
        let elsewhere = ArchivedPayload(digest: WARCDigest.sha1(Data("theirs".utf8)), recordID: "<urn:uuid:00000000-0000-0000-0000-000000000001>",
                                        targetURI: "http://127.0.0.1:1/theirs", date: "2026-12-01T10:00:00.000001Z")
        let index = Index([elsewhere])
        let writer = try WARCWriter(path: path, deduplicates: true, sharedPayloads: index)
        try writer.write([makeExchange(url: "http://127.0.0.1:1/copy", response: ok("theirs")),
                          makeExchange(url: "http://127.0.0.1:1/mine", response: ok("mine"))])
        let text = String(decoding: try gunzipped(Data(contentsOf: URL(fileURLWithPath: path))), as: UTF8.self)
        let revisit = try #require(text.components(separatedBy: "WARC/1.1\r\n").first { $0.contains("WARC-Type: revisit") })
        #expect(revisit.contains("WARC-Target-URI: http://127.0.0.1:1/copy\r\n"))
        #expect(revisit.contains("WARC-Refers-To: \(elsewhere.recordID)\r\n"))
        #expect(revisit.contains("WARC-Refers-To-Target-URI: \(elsewhere.targetURI)\r\n"))
        #expect(revisit.contains("WARC-Refers-To-Date: \(elsewhere.date)\r\n"))
        #expect(revisit.contains("WARC-Profile: http://netpreserve.org/warc/1.1/revisits/identical-payload-digest\r\n"))

        // Written, not yet committed: nothing shared. Committed: /mine, once.
        #expect(index.archived.isEmpty)
        let committed = writer.mark()
        writer.commit(committed)
        writer.commit(committed)
        #expect(index.archived.map(\.targetURI) == ["http://127.0.0.1:1/mine"])
        #expect(index.archived.first?.digest == WARCDigest.sha1(Data("mine".utf8)))

        // Rolled back before its commit: never shared; the one written after it is.
        try writer.write([makeExchange(url: "http://127.0.0.1:1/gone", response: ok("gone"))])
        writer.rollBack(to: committed)
        try writer.write([makeExchange(url: "http://127.0.0.1:1/kept", response: ok("kept"))])
        writer.commit(writer.mark())
        #expect(index.archived.map(\.targetURI) == ["http://127.0.0.1:1/mine", "http://127.0.0.1:1/kept"])
    }

    /// Without --warc-dedup the index is neither asked nor told.
    @Test func withoutDedupTheIndexIsUnused() throws {
        let directory = temporaryFile("warc-shared-off")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("o.warc.gz").path
        let index = Index([ArchivedPayload(digest: WARCDigest.sha1(Data("x".utf8)), recordID: "<urn:uuid:x>", targetURI: "http://x/", date: "d")])
        let writer = try WARCWriter(path: path, sharedPayloads: index)
        try writer.write([makeExchange(response: ok("x"))])
        writer.commit(writer.mark())
        let text = String(decoding: try gunzipped(Data(contentsOf: URL(fileURLWithPath: path))), as: UTF8.self)
        #expect(!text.contains("WARC-Type: revisit"))
        #expect(index.archived.isEmpty)
    }
}
