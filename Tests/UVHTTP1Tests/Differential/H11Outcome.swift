import Foundation
import Testing

// The shape both sides of the h11 differential tests are put in: what
// Tests/UVHTTP1Tests/Differential/h11_outcome.py prints, one JSON line per input (its docstring
// says what each member means), and what our parsers are converted to. Byte strings are Strings
// of the code points 0-255 (latin-1), as the script writes them, so that no byte is lost.

/// One parser's reading of one input stream.
struct H11Outcome: Codable, Equatable {
    /// A 1xx head (response mode).
    struct Head: Codable, Equatable {
        var status: Int
        var reason: String
        var version: String
        var fields: [[String]]
    }

    /// One message, as far as the parser delivered it.
    struct Message: Codable, Equatable {
        /// The request method the response answers, or the request's own method.
        var method: String?
        /// Request mode only.
        var target: String?
        /// Response mode only (the script omits nothing, so both modes decode).
        var interim: [Head]?
        var status: Int?
        var reason: String?
        var version: String?
        var fields: [[String]]
        var body: String
        var trailers: [[String]]
        var complete: Bool
    }

    var messages: [Message]
    /// "complete", "error" or "incomplete", after every byte was fed.
    var outcome: String
    var error: String?
    /// When incomplete: "complete" or "error" once the peer closed.
    var atEOF: String?
    var eofError: String?
    /// Bytes after the last complete message left unread because the connection closes there.
    var unparsed: Int
    var stopped: String?

    enum CodingKeys: String, CodingKey {
        case messages, outcome, error, unparsed, stopped
        case atEOF = "at_eof", eofError = "eof_error"
    }

    /// Whether the parser took the whole input as well-formed messages (an EOF-framed body
    /// included, which only the close ends).
    var accepts: Bool { outcome == "complete" || (outcome == "incomplete" && atEOF == "complete") }

    /// "complete", "error: …", "incomplete, then at EOF: …", for failure messages.
    var summary: String {
        var text = outcome
        if let error { text += " (\(error))" }
        if let atEOF { text += ", then at EOF \(atEOF)" + (eofError.map { " (\($0))" } ?? "") }
        let complete = messages.filter(\.complete).count
        text += "; \(complete) complete message(s)"
        if messages.count > complete { text += " and a partial one" }
        if unparsed > 0 { text += "; \(unparsed) byte(s) left unread" }
        return text
    }
}

/// One line of h11_outcome.py's output.
struct H11Line: Decodable {
    var name: String
    var methods: [String]
    var result: H11Outcome
    /// Whether h11 read the input the same fed in one piece and byte by byte (error texts aside).
    var splitInvariant: Bool

    enum CodingKeys: String, CodingKey {
        case name, methods, result
        case splitInvariant = "split_invariant"
    }
}

/// Where the differential inputs and the script are, and how to run it.
enum H11Differential {
    /// The package root (this file is Tests/UVNetworkingTests/HTTP1/H11Outcome.swift).
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Tests/UVHTTP1Tests/Differential: the script and our own inputs.
    static let directory = packageRoot.appendingPathComponent("Tests/UVHTTP1Tests/Differential")

    /// The response-parser fuzz harness's seeds.
    static let responseSeeds = packageRoot.appendingPathComponent("Fuzz/corpora/response-parser/seeds")

    /// Whether python3 can import h11 (the suites are skipped, saying so, when it cannot).
    static let isH11Importable: Bool = (try? PythonRun.run(["-c", "import h11"], in: directory).status == 0) ?? false

    /// The script's exit status when h11 cannot be imported.
    static let noH11Status: Int32 = 3

    /// What the script prints for `arguments` (after the mode), by input name; nil when h11 is
    /// not importable (the caller skips, saying so).
    static func run(_ arguments: [String]) throws -> [String: H11Line]? {
        let result = try PythonRun.run([directory.appendingPathComponent("h11_outcome.py").path] + arguments, in: directory)
        if result.status == noH11Status { return nil }
        try #require(result.status == 0, "h11_outcome.py failed (\(result.status)): \(result.stderr)")
        var lines: [String: H11Line] = [:]
        for line in result.stdout.split(separator: "\n") {
            let parsed = try JSONDecoder().decode(H11Line.self, from: Data(line.utf8))
            lines[parsed.name] = parsed
        }
        return lines
    }

    /// The input files of `directory`, as the script lists them (sorted; .txt, .md and .py are not inputs).
    static func inputs(in directory: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { name in
            var isDirectory: ObjCBool = false
            let exists = FileManager.default.fileExists(atPath: directory.appendingPathComponent(name).path, isDirectory: &isDirectory)
            return exists && !isDirectory.boolValue && !name.hasSuffix(".txt") && !name.hasSuffix(".md") && !name.hasSuffix(".py")
        }.sorted()
    }

    /// DIR/methods.txt: "FILE METHOD [METHOD...]" per line, '#' starts a comment.
    static func methods(in directory: URL) throws -> [String: [String]] {
        let file = directory.appendingPathComponent("methods.txt")
        guard FileManager.default.fileExists(atPath: file.path) else { return [:] }
        var table: [String: [String]] = [:]
        for line in try String(contentsOf: file, encoding: .utf8).split(separator: "\n") {
            let words = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0].split(whereSeparator: \.isWhitespace)
            if let name = words.first { table[String(name)] = words.dropFirst().map(String.init) }
        }
        return table
    }

    /// The response harness's request methods for a seed's option byte (FuzzOptions.isHEAD).
    static func seedMethods(flags: UInt8, count: Int = 16) -> [String] {
        let firstIsHEAD = flags & 1 != 0, alternate = flags & 2 != 0
        return (0..<count).map { index in (alternate && index % 2 == 1 ? !firstIsHEAD : firstIsHEAD) ? "HEAD" : "GET" }
    }
}

extension String {
    /// Bytes as a String of the code points 0-255, the script's form.
    init(latin1 bytes: some Sequence<UInt8>) {
        var scalars = String.UnicodeScalarView()
        for byte in bytes { scalars.append(Unicode.Scalar(byte)) }
        self.init(scalars)
    }

    /// The bytes of a String of the code points 0-255.
    var latin1Bytes: [UInt8] { unicodeScalars.map { UInt8(truncatingIfNeeded: $0.value) } }
}
