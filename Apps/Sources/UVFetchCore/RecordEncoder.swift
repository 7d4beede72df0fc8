import Foundation

/// Encodes `FetchRecord`s as the JSON Lines of `--jsonl`: one object, keys sorted so lines diff
/// cleanly, every key present (absent values as `null`), slashes unescaped. `RecordWriter` writes
/// with one, so whoever stores records elsewhere with another (`uvfetch worker`) keeps
/// byte-identical lines.
///
/// Written by hand, byte for byte what `JSONEncoder` with `[.sortedKeys, .withoutEscapingSlashes]`
/// makes of a record (the tests compare the two), at a fraction of its cost: no generic
/// containers, no key sorting or hashing per record, and no allocation when appending to a
/// buffer that has room.
public struct RecordEncoder: Sendable {
    /// Creates an encoder.
    public init() {}

    /// The record's line without its newline; nil if it cannot be encoded (a non-finite timing).
    public func line(for record: FetchRecord) -> Data? {
        var bytes: [UInt8] = []
        guard append(record, to: &bytes) else { return nil }
        return Data(bytes)
    }

    /// Appends the record's line, without its newline, to `bytes`; false, and nothing appended,
    /// if it cannot be encoded (a non-finite timing, which JSON has no number for).
    @discardableResult
    public func append(_ record: FetchRecord, to bytes: inout [UInt8]) -> Bool {
        let timings = record.timings
        guard timings.total.isFinite, timings.connect?.isFinite ?? true, timings.tls?.isFinite ?? true,
              timings.firstByte?.isFinite ?? true
        else { return false }
        // Room for the longest line the record can make (every string byte escaped), written in
        // place: no per-value capacity check, and the buffer grows only when that room is not
        // already there.
        bytes.append(addingCapacity: Self.maximumLength(of: record)) { span in
            span.withUnsafeMutableBufferPointer { room, written in
                var json = JSONBytes(at: room.baseAddress!)
                Self.write(record, into: &json)
                written = json.next - room.baseAddress!
            }
        }
        return true
    }

    /// The keys and punctuation (about 265 bytes), nulls, 7 numbers and the strings at worst.
    private static func maximumLength(of record: FetchRecord) -> Int {
        var length = 400 + 7 * JSONBytes.maximumNumberLength + JSONBytes.maximumLength(of: record.url)
            + JSONBytes.maximumLength(of: record.requestURL) + JSONBytes.maximumLength(of: record.effectiveURL)
        if let file = record.file { length += JSONBytes.maximumLength(of: file) }
        if let name = record.httpProtocol { length += JSONBytes.maximumLength(of: name) }
        if let cache = record.cache { length += JSONBytes.maximumLength(of: cache) }
        if let urlBase64 = record.urlBase64 { length += JSONBytes.maximumLength(of: urlBase64) }
        if let etag = record.etag { length += JSONBytes.maximumLength(of: etag) }
        if let lastModified = record.lastModified { length += JSONBytes.maximumLength(of: lastModified) }
        if let capture = record.capture {
            length += 40 + JSONBytes.maximumLength(of: capture.date) + JSONBytes.maximumLength(of: capture.recordID)
        }
        if let error = record.error {
            length += JSONBytes.maximumLength(of: error.code) + JSONBytes.maximumLength(of: error.kind)
                + JSONBytes.maximumLength(of: error.message)
        }
        return length
    }

    /// Keys in the order JSONEncoder's `.sortedKeys` gives: by their UTF-8 bytes. An absent
    /// value is written with its key in one copy (`",\"etag\":null"`): most of a record's
    /// optional fields are absent, and each copy is a call.
    private static func write(_ record: FetchRecord, into json: inout JSONBytes) {
        json.text("{\"attempts\":")
        json.number(record.attempts)
        json.text(",\"bytes\":")
        json.number(record.bytes)
        json.field(",\"cache\":", record.cache, orNull: ",\"cache\":null")
        if let capture = record.capture {
            json.text(",\"capture\":{\"date\":")
            json.string(capture.date)
            json.text(",\"recordID\":")
            json.string(capture.recordID)
            json.text("},\"effectiveURL\":")
        } else {
            json.text(",\"capture\":null,\"effectiveURL\":")
        }
        json.string(record.effectiveURL)
        if let error = record.error {
            json.text(",\"error\":{\"code\":")
            json.string(error.code)
            json.text(",\"kind\":")
            json.string(error.kind)
            json.text(",\"message\":")
            json.string(error.message)
            json.byte(UInt8(ascii: "}"))
        } else {
            json.text(",\"error\":null")
        }
        json.field(",\"etag\":", record.etag, orNull: ",\"etag\":null")
        json.field(",\"file\":", record.file, orNull: ",\"file\":null")
        json.field(",\"lastModified\":", record.lastModified, orNull: ",\"lastModified\":null")
        json.text(record.notModified ? ",\"notModified\":true" : ",\"notModified\":false")
        json.field(",\"protocol\":", record.httpProtocol, orNull: ",\"protocol\":null")
        json.text(",\"requestURL\":")
        json.string(record.requestURL)
        if let status = record.status {
            json.text(",\"status\":")
            json.number(status)
        } else {
            json.text(",\"status\":null")
        }
        json.field(",\"timings\":{\"connect\":", record.timings.connect, orNull: ",\"timings\":{\"connect\":null")
        json.field(",\"firstByte\":", record.timings.firstByte, orNull: ",\"firstByte\":null")
        json.field(",\"tls\":", record.timings.tls, orNull: ",\"tls\":null")
        json.text(",\"total\":")
        json.number(record.timings.total)
        json.text("},\"url\":")
        json.string(record.url)
        if let urlBase64 = record.urlBase64 {
            json.text(",\"urlBase64\":")
            json.string(urlBase64)
            json.byte(UInt8(ascii: "}"))
        } else {
            json.text(",\"urlBase64\":null}")
        }
    }
}

extension JSONBytes {
    /// `key` and `value`, or `keyAndNull` (the key with `null`) in one copy.
    fileprivate mutating func field(_ key: StaticString, _ value: String?, orNull keyAndNull: StaticString) {
        if let value {
            text(key)
            string(value)
        } else {
            text(keyAndNull)
        }
    }

    fileprivate mutating func field(_ key: StaticString, _ value: Double?, orNull keyAndNull: StaticString) {
        if let value {
            text(key)
            number(value)
        } else {
            text(keyAndNull)
        }
    }
}
