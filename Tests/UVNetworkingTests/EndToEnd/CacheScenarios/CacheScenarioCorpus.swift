import Foundation

/// The HTTP cache scenarios of the web-platform-tests (`../shared/conformance/http-cache`, see
/// its README): requests sent in order through one cache, each with what the origin answers
/// and what the client must see.
///
/// Found through `UVN_HTTP_CACHE_SCENARIOS` (a directory), else at
/// `../shared/conformance/http-cache` next to the package root. Not part of this repository:
/// without it the suite is skipped.
struct CacheScenarioCorpus: Sendable {
    /// A header value: text, a date relative to the scenario's first request, or a URL.
    enum Value: Decodable, Sendable {
        case text(String)
        case dateOffset(Int)
        case urlOf(String)

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let text = try? container.decode(String.self) {
                self = .text(text)
                return
            }
            let object = try container.decode([String: JSONScalar].self)
            if case .number(let offset)? = object["http_date_offset_s"] {
                self = .dateOffset(Int(offset))
            } else if case .text(let name)? = object["url_of"] {
                self = .urlOf(name)
            } else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "an unknown header value")
            }
        }
    }

    enum JSONScalar: Decodable, Sendable {
        case text(String)
        case number(Double)
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let number = try? container.decode(Double.self) { self = .number(number) } else { self = .text(try container.decode(String.self)) }
        }
    }

    struct Response: Decodable, Sendable {
        var status: Int?
        var headers: [[Value]]?
        var body: String?
    }

    struct Expect: Decodable, Sendable {
        var type: String?
        var status: Int?
        var response_text: String?
        var response_headers: [[String]]?
        var request_headers: [[String]]?
    }

    struct Step: Decodable, Sendable {
        var method: String?
        var request_headers: [[String]]?
        var request_body: String?
        var cache_mode: String?
        var target: String?
        var pause_after_s: Double?
        var response: Response?
        var expect: Expect?
    }

    struct Scenario: Decodable, Sendable {
        var name: String
        var id: String
        var optional: String?
        var requests: [Step]
        /// The file it comes from, without `.json` (set when loaded).
        var file = ""

        private enum CodingKeys: String, CodingKey { case name, id, optional, requests }
    }

    private struct File: Decodable {
        var tests: [Scenario]
    }

    let directory: URL
    let scenarios: [Scenario]

    static let location: URL? = {
        let directory: URL
        if let override = ProcessInfo.processInfo.environment["UVN_HTTP_CACHE_SCENARIOS"], !override.isEmpty {
            directory = URL(fileURLWithPath: override, isDirectory: true)
        } else {
            // This file is Tests/UVNetworkingTests/EndToEnd/CacheScenarios/CacheScenarioCorpus.swift.
            let packageRoot = URL(fileURLWithPath: #filePath)
                .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().deletingLastPathComponent()
            directory = packageRoot.deletingLastPathComponent().appendingPathComponent("shared/conformance/http-cache", isDirectory: true)
        }
        let server = directory.appendingPathComponent("serve.py")
        return FileManager.default.fileExists(atPath: server.path) ? directory.standardizedFileURL : nil
    }()

    static var isAvailable: Bool { location != nil }

    static func load() throws -> CacheScenarioCorpus {
        guard let directory = location else { throw CocoaError(.fileNoSuchFile) }
        var scenarios: [Scenario] = []
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".json") }.sorted()
        for name in names {
            let file = try JSONDecoder().decode(File.self, from: Data(contentsOf: directory.appendingPathComponent(name)))
            for var scenario in file.tests {
                scenario.file = String(name.dropLast(5))
                scenarios.append(scenario)
            }
        }
        return CacheScenarioCorpus(directory: directory, scenarios: scenarios)
    }
}
