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
    public func nextLine() -> String? {
        let length = getline(&buffer, &capacity, file)
        guard length >= 0, let buffer else { return nil }
        var end = length
        if end > 0, buffer[end - 1] == 0x0A { end -= 1 }
        if end > 0, buffer[end - 1] == 0x0D { end -= 1 }
        return buffer.withMemoryRebound(to: UInt8.self, capacity: end) {
            String(decoding: UnsafeBufferPointer(start: $0, count: end), as: UTF8.self)
        }
    }
}
