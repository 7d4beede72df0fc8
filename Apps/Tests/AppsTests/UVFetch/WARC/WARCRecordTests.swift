import Foundation
import Testing
@testable import UVFetchCore

@Suite(.tags(.unit)) struct WARCRecordTests {
    @Test func serializedRecordHasItsFieldsLengthDigestAndEnd() throws {
        let date = Date(timeIntervalSince1970: 1_700_000_000.25)
        let record = WARCRecord(type: "resource", date: date, fields: [("WARC-Target-URI", "http://example.test/")],
                                block: Data("abc".utf8))
        let text = String(decoding: record.serialized, as: UTF8.self)
        #expect(text == """
            WARC/1.1\r
            WARC-Type: resource\r
            WARC-Record-ID: \(record.id)\r
            WARC-Date: 2023-11-14T22:13:20.250000Z\r
            WARC-Target-URI: http://example.test/\r
            WARC-Block-Digest: sha1:VGMT4NSHA2AWVOR6EVYXQUGCNSONBWE5\r
            Content-Length: 3\r
            \r
            abc\r
            \r

            """)
        #expect(record.id.hasPrefix("<urn:uuid:") && record.id.hasSuffix(">"))
        #expect(UUID(uuidString: String(record.id.dropFirst(10).dropLast())) != nil)
        #expect(try gunzipped(record.compressed) == record.serialized)
    }

    @Test func idsAreFresh() {
        #expect(WARCRecord.newID() != WARCRecord.newID())
    }

    @Test func warcinfoIsWARCFieldsOnOneLineEach() {
        let info = WARCInfo.record(fileName: "a.warc.gz", fields: [("description", "two\nlines")])
        let block = String(decoding: info.block, as: UTF8.self)
        #expect(block.hasPrefix("software: \(WARCInfo.software)\r\nformat: WARC File Format 1.1\r\n"))
        #expect(block.hasSuffix("description: two lines\r\n"))
        #expect(info.fields.contains { $0.name == "Content-Type" && $0.value == "application/warc-fields" })
        #expect(info.fields.contains { $0.name == "WARC-Filename" && $0.value == "a.warc.gz" })
    }
}
