import Foundation

/// The `warcinfo` record that starts each WARC file: what wrote it and how (`application/
/// warc-fields`, a `name: value` line each, as the WARC 1.1 annex suggests).
enum WARCInfo {
    /// The software field's value.
    static let software = "uvfetch (UVNetworking)"

    /// A warcinfo record for the file `fileName`, with `fields` after the standard ones
    /// (software, format, conformsTo, hostname).
    static func record(fileName: String, fields: [(name: String, value: String)], date: Date = Date()) -> WARCRecord {
        var lines: [(name: String, value: String)] = [
            ("software", software),
            ("format", "WARC File Format 1.1"),
            ("conformsTo", "http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/"),
            ("hostname", ProcessInfo.processInfo.hostName),
        ]
        lines += fields
        // A field's value is one line: line breaks in an argument would start a field of their own.
        let block = lines.map { "\($0.name): \(oneLine($0.value))\r\n" }.joined()
        return WARCRecord(type: "warcinfo", date: date,
                          fields: [("WARC-Filename", oneLine(fileName)), ("Content-Type", "application/warc-fields")],
                          block: Data(block.utf8))
    }

    private static func oneLine(_ text: String) -> String {
        text.replacingOccurrences(of: "\r", with: " ").replacingOccurrences(of: "\n", with: " ")
    }
}
