#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Reads an open file one line at a time, so an input list of any length costs only the longest
/// line in memory.
///
/// Built on `getline(3)` because `FileHandle` offers no line reading and reading the whole file
/// is exactly what a ten-million-line list must not do.
public final class LineReader {
    private let file: UnsafeMutablePointer<FILE>
    private var buffer: UnsafeMutablePointer<CChar>?
    private var capacity = 0
    /// Whether no line has been read yet: its leading byte order mark, if any, is skipped.
    private var atStart = true

    /// Reads `descriptor` from its current offset and closes it when done; nil (with the
    /// descriptor closed) when no stream can be made over it.
    public init?(descriptor: Int32) {
        guard let opened = fdopen(descriptor, "r") else {
            close(descriptor)
            return nil
        }
        file = opened
    }

    deinit {
        free(buffer)
        fclose(file)
    }

    /// The next line without its line terminator (`\n` or `\r\n`), or nil at end of input.
    /// Bytes that are not UTF-8 are replaced by U+FFFD. A UTF-8 byte order mark (EF BB BF) at
    /// the start of the input is skipped: editors on some systems save lists with one, and it
    /// would otherwise stick to the first URL and make it no URL at all.
    public func nextLine() -> String? {
        nextLineKeepingBytes()?.text
    }

    /// The next line as `nextLine()` gives it, with its bytes as well when they are not valid
    /// UTF-8 (the text has U+FFFD in their place), so the caller can still tell what was
    /// written; nil at end of input.
    public func nextLineKeepingBytes() -> (text: String, invalidUTF8: [UInt8]?)? {
        let length = getline(&buffer, &capacity, file)
        guard length >= 0, let buffer else { return nil }
        var end = length
        if end > 0, buffer[end - 1] == 0x0A { end -= 1 }
        if end > 0, buffer[end - 1] == 0x0D { end -= 1 }
        var start = 0
        if atStart {
            atStart = false
            if end >= 3, UInt8(bitPattern: buffer[0]) == 0xEF, UInt8(bitPattern: buffer[1]) == 0xBB, UInt8(bitPattern: buffer[2]) == 0xBF {
                start = 3
            }
        }
        return buffer.withMemoryRebound(to: UInt8.self, capacity: end) {
            let bytes = UnsafeBufferPointer(start: $0 + start, count: end - start)
            // One validation either way; the bytes are copied only for a line that fails it.
            if let text = String(validating: bytes, as: UTF8.self) { return (text, nil) }
            return (String(decoding: bytes, as: UTF8.self), Array(bytes))
        }
    }
}
