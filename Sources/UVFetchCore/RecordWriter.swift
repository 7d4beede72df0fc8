import Foundation

/// Writes `FetchRecord`s as JSON Lines: one object per line, keys sorted so lines diff cleanly.
/// Called from the runner's serial completion queue only, so it needs no lock of its own.
public final class RecordWriter: @unchecked Sendable {
    private let handle: FileHandle
    private let closesHandle: Bool
    private let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// Writes to `path`, created or truncated; `-` means standard output.
    /// - Throws: `FetchInputError.unwritable` when the file cannot be created.
    public init(path: String) throws(FetchInputError) {
        if path == "-" {
            handle = .standardOutput
            closesHandle = false
            return
        }
        guard FileManager.default.createFile(atPath: path, contents: nil),
              let opened = FileHandle(forWritingAtPath: path)
        else { throw .unwritable(path: path) }
        handle = opened
        closesHandle = true
    }

    deinit { if closesHandle { try? handle.close() } }

    /// Appends one line.
    public func write(_ record: FetchRecord) {
        guard var line = try? encoder.encode(record) else { return }
        line.append(0x0A)
        handle.write(line)
    }
}
