import Foundation

/// Writes `FetchRecord`s as JSON Lines: one object per line, keys sorted so lines diff cleanly.
/// Called from the runner's serial completion queue only, so it needs no lock of its own.
public final class RecordWriter: @unchecked Sendable {
    /// Where the lines go.
    public let output: LineOutput
    private let encoder = RecordEncoder()

    /// Writes to `path`, opened as `LineOutput.open(path:)` opens it (as `curl -o` does); `-`
    /// or `/dev/stdout` mean standard output.
    /// - Throws: `FetchInputError.cannotCreate` when the file cannot be opened.
    public init(path: String) throws(FetchInputError) {
        output = try LineOutput.open(path: path)
    }

    /// Writes to `output`: for `--resume`, the file `ResumableRecords` opened for appending.
    public init(output: LineOutput) {
        self.output = output
    }

    /// Whether the records go to standard output, which then carries nothing else.
    public var isStandardOutput: Bool { output.isStandardOutput }

    /// Appends one line, written whole.
    /// - Throws: `WriteFailure` when the write fails; the lines before it stay complete.
    public func write(_ record: FetchRecord) throws(WriteFailure) {
        guard let line = line(for: record) else { return }
        try output.write(line)
    }

    /// The record's line with its newline, for writing later; nil if it cannot be encoded.
    func line(for record: FetchRecord) -> Data? {
        guard var line = encoder.line(for: record) else { return nil }
        line.append(0x0A)
        return line
    }
}
