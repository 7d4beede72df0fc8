import Foundation

/// One line of a CDXJ index (`--cdxj`): where a response or revisit record lies in its WARC
/// file, keyed for lookup by URL and time, as pywb and Browsertrix read it and cdxj-indexer
/// (PyPI) writes it: `SURT TIMESTAMP {"url": ..., "mime": ..., "status": ..., "digest": ...,
/// "length": ..., "offset": ..., "filename": ...}`, values as strings, in that order, `mime`
/// left out when the response has no Content-Type.
struct CDXJEntry: Equatable {
    /// WARC-Target-URI.
    var url: String
    /// The record's WARC-Date.
    var date: Date
    /// The HTTP Content-Type up to its first `;` or space, "warc/revisit" for a revisit; nil
    /// without one.
    var mime: String?
    /// The HTTP status.
    var status: Int?
    /// WARC-Payload-Digest.
    var digest: String?
    /// The record's gzip member: its length and where it starts in the file.
    var length: Int
    var offset: Int64
    /// The WARC file's name, without its directory.
    var filename: String

    /// The line, with its newline.
    var line: String {
        var fields: [(String, String)] = [("url", url)]
        if let mime { fields.append(("mime", mime)) }
        if let status { fields.append(("status", String(status))) }
        if let digest { fields.append(("digest", digest)) }
        fields += [("length", String(length)), ("offset", String(offset)), ("filename", filename)]
        let object = fields.map { "\(Self.quoted($0.0)): \(Self.quoted($0.1))" }.joined(separator: ", ")
        return "\(SURT.key(url)) \(Self.timestamp(date)) {\(object)}\n"
    }

    /// `YYYYMMDDhhmmss` in UTC: the 14 digits of the WARC-Date, its fraction dropped.
    static func timestamp(_ date: Date) -> String {
        let iso = WARCDate.string(date)
        return String(iso.filter(\.isNumber).prefix(14))
    }

    /// The media type of a Content-Type value: up to its first `;` or white space.
    static func mime(contentType: String) -> String {
        String(contentType.prefix { $0 != ";" && $0 != " " && $0 != "\t" && $0 != "\r" && $0 != "\n" })
    }

    /// A JSON string as Python's json.dumps writes it by default: ASCII only (`\uXXXX`,
    /// surrogate pairs beyond the BMP), the short escapes for `"`, `\`, and controls.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for unit in text.utf16 {
            switch unit {
            case 0x22: out += "\\\""
            case 0x5C: out += "\\\\"
            case 0x0A: out += "\\n"
            case 0x0D: out += "\\r"
            case 0x09: out += "\\t"
            case 0x08: out += "\\b"
            case 0x0C: out += "\\f"
            case 0x20..<0x7F: out.unicodeScalars.append(Unicode.Scalar(UInt8(unit)))
            default:
                let digits = String(unit, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - digits.count) + digits
            }
        }
        return out + "\""
    }
}
