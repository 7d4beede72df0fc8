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
        var head = "WARC/1.1\r\n"
        head += "WARC-Type: \(type)\r\n"
        head += "WARC-Record-ID: \(id)\r\n"
        head += "WARC-Date: \(WARCDate.string(date))\r\n"
        for field in fields { head += "\(field.name): \(field.value)\r\n" }
        head += "WARC-Block-Digest: \(WARCDigest.sha1(block))\r\n"
        head += "Content-Length: \(block.count)\r\n\r\n"
        var bytes = Data(head.utf8)
        bytes.reserveCapacity(bytes.count + block.count + 4)
        bytes.append(block)
        bytes.append(contentsOf: [0x0D, 0x0A, 0x0D, 0x0A])
        return bytes
    }

    /// The record as one gzip member, ready to append to a `.warc.gz` file.
    var compressed: Data { GzipMember.compress(serialized) }
}
