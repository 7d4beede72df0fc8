import Foundation

/// Encodes `FetchRecord`s as the JSON Lines of `--jsonl`: one object, keys sorted so lines diff
/// cleanly, slashes unescaped. `RecordWriter` writes with one, so whoever stores records
/// elsewhere with another (`uvfetch worker`) keeps byte-identical lines.
///
/// Not for concurrent use: one per queue or thread (JSONEncoder is a class with settings).
public final class RecordEncoder: @unchecked Sendable {
    // @unchecked: the encoder is configured once and then only encodes, from one queue.
    private let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// Creates an encoder.
    public init() {}

    /// The record's line without its newline; nil if it cannot be encoded (a non-finite timing).
    public func line(for record: FetchRecord) -> Data? {
        try? encoder.encode(record)
    }
}
