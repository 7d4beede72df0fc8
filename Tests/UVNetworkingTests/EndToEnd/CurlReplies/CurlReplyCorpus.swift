import Foundation

/// The replies taken from curl's own test suite (`../shared/conformance/curl-replies`, see its
/// README): one case per curl test, each with one or more reply parts.
///
/// The corpus is found through `UVN_CURL_REPLIES` (a directory), else at
/// `../shared/conformance/curl-replies` next to the package root. It is not part of this
/// repository: without it the conformance suite is skipped.
struct CurlReplyCorpus: Sendable {
    /// One curl test: the request to make and the replies to serve.
    struct Case: Decodable, Sendable {
        /// curl's test number.
        var test: Int
        var title: String
        /// The request URL, with `%HTTPPORT` where the port goes.
        var url: String
        /// GET or HEAD.
        var method: String
        /// Reply part name ("data", "data1", "data2", ...) to file name.
        var parts: [String: String]
        /// Server commands from the test file (`swsclose` among them).
        var servercmd: [String]
        /// What the server does after each reply (`wait N`: N seconds before going on).
        var postcmd: [String]
        /// What the reply exercises, in words.
        var exercises: [String]
    }

    private struct Index: Decodable {
        var cases: [Case]
    }

    /// The corpus directory.
    let directory: URL
    /// Every case, in the index's order.
    let cases: [Case]

    /// The corpus directory: `UVN_CURL_REPLIES`, else `../shared/conformance/curl-replies`
    /// relative to the package root; nil when there is no index there.
    static let location: URL? = {
        let directory: URL
        if let override = ProcessInfo.processInfo.environment["UVN_CURL_REPLIES"], !override.isEmpty {
            directory = URL(fileURLWithPath: override, isDirectory: true)
        } else {
            // This file is Tests/UVNetworkingTests/EndToEnd/CurlReplies/CurlReplyCorpus.swift.
            let packageRoot = URL(fileURLWithPath: #filePath)
                .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().deletingLastPathComponent()
            directory = packageRoot.deletingLastPathComponent()
                .appendingPathComponent("shared/conformance/curl-replies", isDirectory: true)
        }
        let index = directory.appendingPathComponent("index.json")
        return FileManager.default.fileExists(atPath: index.path) ? directory.standardizedFileURL : nil
    }()

    /// Whether the corpus is there (the suite is skipped otherwise).
    static var isAvailable: Bool { location != nil }

    /// Loads the index at `location`.
    static func load() throws -> CurlReplyCorpus {
        guard let directory = location else { throw CocoaError(.fileNoSuchFile) }
        let data = try Data(contentsOf: directory.appendingPathComponent("index.json"))
        let index = try JSONDecoder().decode(Index.self, from: data)
        return CurlReplyCorpus(directory: directory, cases: index.cases)
    }

    /// Every reply part of `testCase`, by part number (data = 0, dataK = K), read from disk.
    func replies(of testCase: Case) throws -> [Int: [UInt8]] {
        var replies: [Int: [UInt8]] = [:]
        for (name, file) in testCase.parts {
            guard name.hasPrefix("data"), let part = name == "data" ? 0 : Int(name.dropFirst(4)) else { continue }
            replies[part] = try [UInt8](Data(contentsOf: directory.appendingPathComponent(file)))
        }
        return replies
    }
}

extension CurlReplyCorpus.Case {
    /// The server closes the connection after replies that say `swsclose` (or when told so for
    /// the whole test), as curl's test server does; otherwise it waits for the next request.
    var serverAlwaysCloses: Bool { servercmd.contains("swsclose") }

    /// Seconds the server waits after each reply before it closes or reads on (`wait N`).
    var waitAfterReply: Double {
        postcmd.compactMap { command -> Double? in
            let words = command.split(separator: " ")
            return words.count == 2 && words[0] == "wait" ? Double(words[1]) : nil
        }.reduce(0, +)
    }

    /// The request URL for a server on `port`.
    func url(port: Int) -> URL? {
        URL(string: url.replacingOccurrences(of: "%HTTPPORT", with: String(port)))
    }
}
