import Foundation

/// The URLs to fetch: the command-line arguments, then the input file (or stdin), all of it
/// `repeatCount` times, produced one at a time so nothing but the current line is held.
public struct URLInput: Sequence, Sendable {
    /// One input entry.
    public enum Entry: Equatable, Sendable {
        /// A URL to fetch.
        case url(URL)
        /// A line (or argument) that is not an absolute http(s) URL: where it was and its text.
        /// Arguments are numbered as "argument N", file lines as "line N".
        case malformed(place: String, text: String)
    }

    /// The arguments parsed once: `--repeat` over a short list would otherwise parse the same
    /// URLs again for every request.
    private let arguments: [Entry?]
    private let inputPath: String?
    private let repeatCount: Int

    /// Checks the input can be read before anything runs, so a bad path fails fast.
    /// - Throws: `FetchInputError` for an unreadable file, or stdin with `repeatCount > 1`.
    public init(arguments: [String], inputPath: String?, repeatCount: Int = 1) throws(FetchInputError) {
        if let inputPath {
            if inputPath == "-" {
                if repeatCount > 1 { throw .stdinRepeated }
            } else {
                _ = try LineReader(path: inputPath)
            }
        }
        self.arguments = arguments.enumerated().map { index, text in
            URLInput.entry(for: text, place: "argument \(index + 1)")
        }
        self.inputPath = inputPath
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
        guard let url = URL(string: candidate), let scheme = url.scheme?.lowercased(),
              scheme == "http" || scheme == "https", let host = url.host, !host.isEmpty
        else { return .malformed(place: place(), text: candidate) }
        return .url(url)
    }

    /// `text` without leading and trailing spaces and tabs; nil when nothing else is left.
    private static func trimmed(_ text: String) -> Substring? {
        let isBlank = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        guard let start = text.utf8.firstIndex(where: { !isBlank($0) }),
              let last = text.utf8.lastIndex(where: { !isBlank($0) }) else { return nil }
        return text[start...last]
    }

    /// How many entries (URLs and malformed lines) a full pass yields, for the progress line's
    /// total; nil for standard input, which can be read only once. Reads the file through once
    /// more without parsing URLs, so call it off the path that feeds requests.
    public func countEntries() -> Int? {
        var perPass = arguments.count { $0 != nil }
        if let inputPath {
            guard inputPath != "-", let reader = try? LineReader(path: inputPath) else { return nil }
            while let line = reader.nextLine() {
                if Self.isEntry(line) { perPass += 1 }
            }
        }
        return perPass * repeatCount
    }

    /// Whether a line is an entry at all: not blank and not a `#` comment, judged as
    /// `entry(for:place:)` judges it but without parsing a URL.
    private static func isEntry(_ line: String) -> Bool {
        guard let trimmed = trimmed(line) else { return false }
        return trimmed.utf8.first != UInt8(ascii: "#")
    }

    /// A fresh pass over the input.
    public func makeIterator() -> Iterator {
        Iterator(input: self)
    }

    /// Walks arguments then file lines, reopening the file for every repetition.
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
                    // Opened per pass: the init already proved the path readable.
                    reader = input.inputPath.flatMap { try? LineReader(path: $0) }
                    lineNumber = 0
                }
                while let line = reader?.nextLine() {
                    lineNumber += 1
                    if let entry = URLInput.entry(for: line, place: "line \(lineNumber)") { return entry }
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
