import Foundation

/// A record line as `RecordWriter` writes it, read by its shape: with sorted keys it starts
/// with `{"attempts":` and ends with `"url":"…","urlBase64":null}` (or the base64 in quotes),
/// so the URL is found at the end of the line without decoding the rest.
///
/// This is `--resume`'s fast path: `JSONDecoder` spends about 9 µs on a record (most of it
/// building a dictionary of the ten keys), a minute and a half for a file of ten million,
/// before the first request. A line of another shape (a URL with an escape in its JSON, a
/// file written by something else) gets nil here and is decoded whole, which also says why
/// it is no record. The rest of a line of this shape is not checked: a torn line is a
/// prefix of a record, which never ends as a whole one does.
enum RecordLineShape {
    private static let start = Array(#"{"attempts":"#.utf8)
    private static let urlKey = Array(#","url":""#.utf8)
    private static let nullBase64 = Array(#","urlBase64":null}"#.utf8)
    private static let base64Key = Array(#","urlBase64":""#.utf8)

    /// The key of the URL the record on `line` names; nil when the line does not have the
    /// shape, or its URL has an escape, a control byte, or bytes that are not UTF-8.
    static func urlKey(of line: UnsafeRawBufferPointer) -> RecordedURLKey? {
        guard has(start, in: line, at: 0) else { return nil }
        var end = line.count
        var base64: Range<Int>?
        if has(nullBase64, in: line, at: end - nullBase64.count) {
            end -= nullBase64.count
        } else {
            // …","urlBase64":"BASE64"}
            guard end >= 2, line[end - 1] == UInt8(ascii: "}"), line[end - 2] == UInt8(ascii: "\""),
                  let open = lastQuote(in: line, before: end - 2), has(base64Key, in: line, at: open + 1 - base64Key.count)
            else { return nil }
            base64 = (open + 1)..<(end - 2)
            end = open + 1 - base64Key.count
        }
        // …,"url":"URL"
        guard end >= 1, line[end - 1] == UInt8(ascii: "\""), let open = lastQuote(in: line, before: end - 1),
              has(urlKey, in: line, at: open + 1 - urlKey.count) else { return nil }
        let url = UnsafeRawBufferPointer(rebasing: line[(open + 1)..<(end - 1)])
        // A backslash starts an escape, which JSONDecoder reads; a control byte is not JSON.
        guard !url.contains(where: { $0 == UInt8(ascii: "\\") || $0 < 0x20 }) else { return nil }
        if let base64 {
            let text = String(decoding: UnsafeRawBufferPointer(rebasing: line[base64]), as: UTF8.self)
            guard let decoded = Data(base64Encoded: text) else { return nil }
            return RecordedURLKey(bytes: Array(decoded))
        }
        guard String(validating: url, as: UTF8.self) != nil else { return nil }
        return RecordedURLKey(url)
    }

    /// Whether `literal` is in `line` at `offset`.
    private static func has(_ literal: [UInt8], in line: UnsafeRawBufferPointer, at offset: Int) -> Bool {
        guard offset >= 0, offset + literal.count <= line.count else { return false }
        return literal.withUnsafeBytes { memcmp(line.baseAddress! + offset, $0.baseAddress!, literal.count) == 0 }
    }

    /// The offset of the last `"` before `end`.
    private static func lastQuote(in line: UnsafeRawBufferPointer, before end: Int) -> Int? {
        var index = end - 1
        while index >= 0 && line[index] != UInt8(ascii: "\"") { index -= 1 }
        return index >= 0 ? index : nil
    }
}
