import ArgumentParser
import Foundation
import Testing
import UVFetchCore

/// Runs `FetchRunner` with a JSON Lines file and returns the outcome and the decoded lines.
func runFetch(_ urls: [String], options arguments: [String] = [], concurrency: Int = 4, outputDirectory: OutputDirectory? = nil)
    throws -> (outcome: FetchRunner.Outcome, records: [[String: Any]], diagnostics: [String]) {
    let file = temporaryFile("records.jsonl")
    defer { try? FileManager.default.removeItem(at: file) }
    var settings = FetchRunner.Settings()
    settings.concurrency = concurrency
    settings.printsLines = false
    let diagnostics = DiagnosticLines()
    let runner = FetchRunner(options: try RequestOptions.parse(arguments), settings: settings,
                             writer: try RecordWriter(path: file.path), outputDirectory: outputDirectory) { diagnostics.append($0) }
    let outcome = try runner.run(try URLInput(arguments: urls, inputPath: nil))
    let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n")
    let records = try lines.map { try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
    return (outcome, records, diagnostics.lines)
}

/// Diagnostics gathered from the runner's callback.
final class DiagnosticLines: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [String] = []
    func append(_ line: String) { lock.withLock { stored.append(line) } }
    var lines: [String] { lock.withLock { stored } }
}

/// `FetchRunner` against the test nginx: one JSON Lines record per URL, with timings and errors.
@Suite(.tags(.nginx), .serialized) struct FetchRunnerTests {
    @Test func recordsForSuccessNoContentAndNotFound() throws {
        let base = try TestServers.nginx().baseURL
        let (outcome, records, _) = try runFetch(["\(base)/hello", "\(base)/no-content", "\(base)/missing"])
        #expect(records.count == 3)
        let byURL = Dictionary(uniqueKeysWithValues: records.map { ($0["url"] as! String, $0) })
        let hello = try #require(byURL["\(base)/hello"])
        #expect(hello["status"] as? Int == 200)
        #expect(hello["bytes"] as? Int == NginxServer.helloBody.utf8.count)
        #expect(hello["error"] is NSNull)
        #expect(hello["attempts"] as? Int == 1)
        let timings = try #require(hello["timings"] as? [String: Any])
        #expect((timings["total"] as? Double ?? -1) > 0)
        #expect(timings["firstByte"] is Double)
        #expect(timings["tls"] is NSNull)
        #expect(byURL["\(base)/no-content"]?["status"] as? Int == 204)
        let missing = try #require(byURL["\(base)/missing"])
        #expect(missing["status"] as? Int == 404)
        let error = try #require(missing["error"] as? [String: Any])
        #expect(error["code"] as? String == "unacceptableStatusCode")
        #expect(outcome.statistics.succeeded == 2)
        #expect(outcome.statistics.exitStatus == ExitStatus.someFailed)
    }

    @Test func keysAreSortedAndNullsWritten() throws {
        let port = try TestServers.freeLoopbackPort()  // nothing listens there
        let (_, records, _) = try runFetch(["http://127.0.0.1:\(port)/"])
        let record = try #require(records.first)
        #expect(record["status"] is NSNull)
        let error = try #require(record["error"] as? [String: Any])
        #expect(error["code"] as? String == "connectionRefused")
        #expect(error["kind"] as? String == "transport")
        let encoded = try JSONEncoder.sortedForTest.encode(
            FetchRecord(url: "u", status: nil, bytes: 0, timings: .init(total: 1), error: nil, attempts: 1))
        let text = String(decoding: encoded, as: UTF8.self)
        #expect(text.hasPrefix("{\"attempts\":1,\"bytes\":0,\"cache\":null,\"capture\":null,\"effectiveURL\":\"u\",\"error\":null,\"etag\":null,\"file\":null,\"lastModified\":null,\"notModified\":false,\"protocol\":null,\"requestURL\":\"u\",\"status\":null,"))
        #expect(text.hasSuffix(",\"url\":\"u\",\"urlBase64\":null}"))
    }

    @Test func malformedArgumentsAreReportedAndCounted() throws {
        let base = try TestServers.nginx().baseURL
        let (outcome, records, diagnostics) = try runFetch(["\(base)/hello", "mailto:x@example.com"])
        #expect(records.count == 1)
        #expect(diagnostics == ["uvfetch: argument 2: not an http(s) URL: mailto:x@example.com"])
        #expect(outcome.statistics.malformed == 1)
        #expect(outcome.statistics.exitStatus == ExitStatus.someFailed)
    }

    @Test func discardedBodiesAreStillCounted() throws {
        let nginx = try TestServers.nginx()
        let (outcome, records, _) = try runFetch(["\(nginx.baseURL)/large-8m", "\(nginx.baseURL)/redirect", "\(nginx.baseURL)/missing"])
        let bytes = Dictionary(uniqueKeysWithValues: records.map { ($0["url"] as? String ?? "", $0["bytes"] as? Int ?? -1) })
        #expect(bytes["\(nginx.baseURL)/large-8m"] == NginxServer.large8MSize)
        #expect(bytes["\(nginx.baseURL)/redirect"] == NginxServer.helloBody.utf8.count)
        #expect(outcome.statistics.bytes == NginxServer.large8MSize + NginxServer.helloBody.utf8.count + (bytes["\(nginx.baseURL)/missing"] ?? 0))
    }

    @Test func everyRequestCarriesTheOptionsAndItsOwnURL() throws {
        // The runner builds one request from the options and changes only the URL per entry.
        let base = try TestServers.httpbin().baseURL
        let directory = try OutputDirectory(path: temporaryFile("echo").path)
        defer { try? FileManager.default.removeItem(at: directory.url) }
        let (outcome, _, _) = try runFetch(["\(base)/anything/first", "\(base)/anything/second"],
                                           options: ["-X", "PUT", "-H", "X-Uvfetch: yes", "-d", "a=1"], outputDirectory: directory)
        #expect(outcome.statistics.succeeded == 2)
        for name in ["first", "second"] {
            let data = try Data(contentsOf: directory.url.appendingPathComponent(name))
            let echo = try #require(JSONSerialization.jsonObject(with: data) as? [String: Any])
            #expect(echo["url"] as? String == "\(base)/anything/\(name)")
            #expect(echo["method"] as? String == "PUT")
            #expect((echo["headers"] as? [String: Any])?["X-Uvfetch"] as? String == "yes")
            #expect((echo["form"] as? [String: Any])?["a"] as? String == "1")
        }
    }

    @Test func manyURLsWithFewSlots() throws {
        let base = try TestServers.nginx().baseURL
        let (outcome, records, _) = try runFetch(Array(repeating: "\(base)/hello", count: 200), concurrency: 3)
        #expect(records.count == 200)
        #expect(outcome.statistics.succeeded == 200)
        #expect(outcome.statistics.exitStatus == ExitStatus.success)
    }
}

extension JSONEncoder {
    /// Sorted keys, as `RecordWriter` writes them.
    static var sortedForTest: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }
}
