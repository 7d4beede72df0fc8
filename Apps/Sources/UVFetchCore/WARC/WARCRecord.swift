import Foundation

/// One WARC/1.1 record (ISO 28500:2017): its named fields and its block, serialized as the
/// version line, the fields, an empty line, the block and two CRLFs.
///
/// The fields every record needs that follow from the block are added here: `Content-Length`
/// and `WARC-Block-Digest` (SHA-1, base32).
struct WARCRecord {
    /// `warcinfo`, `request`, `response`, ...
    let type: String
    /// `<urn:uuid:...>`, as it appears in `WARC-Record-ID` and in other records' references.
    let id: String
    /// Fields after WARC-Type, WARC-Record-ID and WARC-Date, in order.
    var fields: [(name: String, value: String)]
    let block: Data
    let date: Date

    /// A record of `type` with `id`, a fresh one by default.
    init(type: String, id: String = WARCRecord.newID(), date: Date, fields: [(name: String, value: String)], block: Data) {
        self.type = type
        self.id = id
        self.date = date
        self.fields = fields
        self.block = block
    }

    /// A fresh `<urn:uuid:...>` (a random UUID, RFC 9562 version 4).
    static func newID() -> String { "<urn:uuid:\(UUID().uuidString.lowercased())>" }

    /// The record's bytes, uncompressed.
    var serialized: Data {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(512 + block.count)
        func line(_ name: String, _ value: String) {
            bytes.append(contentsOf: name.utf8)
            bytes.append(contentsOf: ": ".utf8)
            bytes.append(contentsOf: value.utf8)
            bytes.append(contentsOf: [0x0D, 0x0A])
        }
        bytes.append(contentsOf: "WARC/1.1\r\n".utf8)
        line("WARC-Type", type)
        line("WARC-Record-ID", id)
        line("WARC-Date", WARCDate.string(date))
        for field in fields { line(field.name, field.value) }
        line("WARC-Block-Digest", WARCDigest.sha1(block))
        line("Content-Length", String(block.count))
        bytes.append(contentsOf: [0x0D, 0x0A])
        bytes.append(contentsOf: block)
        bytes.append(contentsOf: [0x0D, 0x0A, 0x0D, 0x0A])
        return Data(bytes)
    }

    /// The record as one gzip member, ready to append to a `.warc.gz` file.
    var compressed: Data { GzipMember.compress(serialized) }

    /// The record as one gzip member, made by `compressor`.
    func compressed(by compressor: GzipMember) -> Data { compressor.compress(serialized) }
}
