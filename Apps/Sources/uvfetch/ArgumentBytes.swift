import Foundation

/// The bytes the process was given for its arguments, which `CommandLine.arguments` (and so
/// ArgumentParser) no longer has: Swift decodes each argument as UTF-8, putting U+FFFD in place
/// of bytes that are not, so `uvfetch 'http://h/a%FF'` typed as a raw 0xFF would request
/// `/a%EF%BF%BD`. A URL argument is taken as bytes, as a line of `-i` is.
enum ArgumentBytes {
    /// For each of `values` (arguments as ArgumentParser gave them, in command-line order), the
    /// raw bytes of the argument it came from when those are not valid UTF-8; nil when they
    /// are (the text is then exact) or when no argument matches.
    ///
    /// Matched in order: each value is the next argument, at or after the previous match, whose
    /// decoding equals it. Option names and values in between are passed over.
    static func invalidUTF8(of values: [String]) -> [[UInt8]?] {
        let raw = (1..<Int(CommandLine.argc)).compactMap { index -> [UInt8]? in
            guard let argument = CommandLine.unsafeArgv[index] else { return nil }
            return Array(UnsafeBufferPointer(start: UnsafeRawPointer(argument).assumingMemoryBound(to: UInt8.self),
                                             count: strlen(argument)))
        }
        return match(values, in: raw)
    }

    /// `invalidUTF8(of:)` over `raw`, the arguments' bytes.
    static func match(_ values: [String], in raw: [[UInt8]]) -> [[UInt8]?] {
        var next = 0
        return values.map { value -> [UInt8]? in
            // A value that decodes without U+FFFD came from valid UTF-8 (or said U+FFFD itself).
            guard value.unicodeScalars.contains("\u{FFFD}") else { return nil }
            while next < raw.count {
                let bytes = raw[next]
                next += 1
                if String(decoding: bytes, as: UTF8.self) == value {
                    return String(validating: bytes, as: UTF8.self) == nil ? bytes : nil
                }
            }
            return nil
        }
    }
}
