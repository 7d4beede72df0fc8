import Foundation

/// The URLs to fetch: the command-line arguments, then the input file (or stdin), all of it
/// `repeatCount` times, produced one at a time so nothing but the current line is held.
public struct URLInput: Sequence, Sendable {
    /// One input entry.
    public enum Entry: Equatable, Sendable {
        /// A URL to fetch and the text it was read from, trimmed of the spaces and tabs around
        /// it: the record repeats the text as given, whatever the URL parser made of it. `bytes`
        /// are that text's bytes when they are not valid UTF-8 (`text` then has U+FFFD in their
        /// place, and the URL has them percent-escaped); nil otherwise.
        case url(URL, text: String, bytes: [UInt8]? = nil)
        /// A line (or argument) that is not an absolute http(s) URL: where it was and its text.
        /// Arguments are numbered as "argument N", file lines as "line N".
        case malformed(place: String, text: String)

        /// A URL given as its own text (generated URLs such as the demo's).
        public static func url(_ url: URL) -> Entry { .url(url, text: url.absoluteString) }
    }

    /// The arguments parsed once: `--repeat` over a short list would otherwise parse the same
    /// URLs again for every request.
    private let arguments: [Entry?]
    private let inputFile: InputFile?
    private let repeatCount: Int

    /// Opens the input file (`-` for standard input) before anything runs, so a bad path fails
    /// fast; it stays open, and is never opened again, until the last copy of this value goes.
    ///
    /// `argumentBytes`, when given, has for each argument its bytes when they are not valid
    /// UTF-8 (the argument's text then has U+FFFD in their place), else nil: such an argument
    /// is taken as its bytes, as a line of the file is, so the request carries them escaped
    /// (`%FF`) rather than U+FFFD's.
    /// - Throws: `FetchInputError` for a file that cannot be opened or is a directory, or for
    ///   `repeatCount > 1` with input that can be read only once (not a regular file: a pipe,
    ///   a FIFO, a terminal).
    public init(arguments: [String], argumentBytes: [[UInt8]?] = [], inputPath: String?, repeatCount: Int = 1) throws(FetchInputError) {
        let inputFile = try inputPath.map { path throws(FetchInputError) in try InputFile(path: path) }
        if let inputFile, repeatCount > 1, !inputFile.isRegularFile { throw .notRepeatable(name: inputFile.name) }
        self.arguments = arguments.enumerated().map { index, text in
            let bytes = index < argumentBytes.count ? argumentBytes[index] : nil
            return URLInput.entry(for: text, invalidUTF8: bytes, place: "argument \(index + 1)")
        }
        self.inputFile = inputFile
        self.repeatCount = repeatCount
    }

    /// Parses one entry: nil for blank lines and `#` comments. `place` is built only for a
    /// malformed entry.
    ///
    /// Spaces and tabs are trimmed on the UTF-8 bytes: Foundation's `trimmingCharacters(in:)`
    /// bridges every line through NSString and back, which cost a 20,000-URL list more than
    /// parsing the URLs (callgrind: 25k of 31k instructions a line). Other Unicode spaces are
    /// not trimmed, so such a line is reported as malformed rather than guessed at.
    public static func entry(for text: String, place: @autoclosure () -> String) -> Entry? {
        guard let trimmed = trimmed(text), trimmed.utf8.first != UInt8(ascii: "#") else { return nil }
        let candidate = String(trimmed)
        guard let url = httpURL(URLTextEscaping.parseable(candidate)) else { return .malformed(place: place(), text: candidate) }
        return .url(url, text: candidate)
    }

    /// `entry(for:place:)` for a line whose bytes are not valid UTF-8 (`LineReader`'s
    /// `invalidUTF8`): the URL is parsed with those bytes percent-escaped, so the request
    /// carries them rather than U+FFFD's, and the entry keeps them.
    static func entry(for text: String, invalidUTF8 bytes: [UInt8]?, place: @autoclosure () -> String) -> Entry? {
        guard let bytes else { return entry(for: text, place: place()) }
        let isBlank = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        guard let start = bytes.firstIndex(where: { !isBlank($0) }), bytes[start] != UInt8(ascii: "#"),
              let last = bytes.lastIndex(where: { !isBlank($0) }) else { return nil }
        let trimmed = Array(bytes[start...last])
        let text = String(decoding: trimmed, as: UTF8.self)
        guard let url = httpURL(URLTextEscaping.parseable(bytes: trimmed)) else { return .malformed(place: place(), text: text) }
        return .url(url, text: text, bytes: trimmed)
    }

    /// `entry(for:place:)` for a line given as its bytes, UTF-8 or not: what `uvfetch queue push`
    /// stored (the entry's `bytes`, or its text's UTF-8), read back by `uvfetch worker`.
    public static func entry(bytes: [UInt8], place: @autoclosure () -> String) -> Entry? {
        if let text = String(validating: bytes, as: UTF8.self) { return entry(for: text, place: place()) }
        return entry(for: String(decoding: bytes, as: UTF8.self), invalidUTF8: bytes, place: place())
    }

    /// `text` as an absolute http(s) URL with a host; nil for anything else.
    private static func httpURL(_ text: String) -> URL? {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(),
              scheme == "http" || scheme == "https", let host = url.host, !host.isEmpty else { return nil }
        return url
    }

    /// `text` without leading and trailing spaces and tabs; nil when nothing else is left.
    private static func trimmed(_ text: String) -> Substring? {
        let isBlank = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        guard let start = text.utf8.firstIndex(where: { !isBlank($0) }),
              let last = text.utf8.lastIndex(where: { !isBlank($0) }) else { return nil }
        return text[start...last]
    }

    /// How many entries (URLs and malformed lines) all passes yield, for the progress line's
    /// total; nil when the input file is not a regular file (a pipe, a FIFO, a terminal), which
    /// only the passes may read. Reads the open file through once more, without parsing URLs
    /// and without moving the passes' offset, so call it off the path that feeds requests.
    public func countEntries() -> Int? {
        var perPass = arguments.count { $0 != nil }
        if let inputFile {
            guard let inFile = inputFile.countEntries() else { return nil }
            perPass += inFile
        }
        return perPass * repeatCount
    }

    /// A fresh pass over the input.
    public func makeIterator() -> Iterator {
        Iterator(input: self)
    }

    /// Walks arguments then file lines, reading the file from its start for every repetition.
    public struct Iterator: IteratorProtocol {
        private let input: URLInput
        private var pass = 0
        private var argumentIndex = 0
        private var reader: LineReader?
        private var lineNumber = 0
        private var inFile = false

        init(input: URLInput) { self.input = input }

        /// The next URL or malformed entry; nil when every pass is done.
        public mutating func next() -> Entry? {
            while pass < input.repeatCount {
                if !inFile {
                    while argumentIndex < input.arguments.count {
                        argumentIndex += 1
                        if let entry = input.arguments[argumentIndex - 1] { return entry }
                    }
                    inFile = true
                    reader = input.inputFile?.makeReader()
                    lineNumber = 0
                }
                while let line = reader?.nextLineKeepingBytes() {
                    lineNumber += 1
                    if let entry = URLInput.entry(for: line.text, invalidUTF8: line.invalidUTF8, place: "line \(lineNumber)") {
                        return entry
                    }
                }
                reader = nil
                inFile = false
                argumentIndex = 0
                pass += 1
            }
            return nil
        }
    }
}
