import Foundation
import LoopbackHTTPServer
import Testing
import UVFetchCore

/// `--delay-per-host` in a run: a paced host at the head of the list does not hold back the
/// hosts after it, and every URL still gets exactly one record.
@Suite(.tags(.childProcess), .serialized) struct FetchPacingTests {
    private func run(_ urls: [String], delay: Double, concurrency: Int) throws -> [[String: Any]] {
        let file = temporaryFile("paced.jsonl")
        defer { try? FileManager.default.removeItem(at: file) }
        var settings = FetchRunner.Settings()
        settings.concurrency = concurrency
        settings.printsLines = false
        settings.delayPerHost = delay
        let runner = FetchRunner(options: try RequestOptions.parse([]), settings: settings,
                                 writer: try RecordWriter(path: file.path)) { _ in }
        _ = try runner.run(try URLInput(arguments: urls, inputPath: nil))
        let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n")
        return try lines.map { try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
    }

    @Test func otherHostsFinishWhileThePacedHeadWaits() throws {
        let servers = (0..<3).map { _ in LoopbackHTTPServer() }
        defer { for server in servers { server.stop() } }
        let bases = try servers.map { "http://127.0.0.1:\(try $0.start())" }
        // Eight URLs of one host first, then two of each of two other hosts; four in flight.
        let head = (1...8).map { "\(bases[0])/items/\($0)" }
        let rest = (1...2).flatMap { index in [bases[1], bases[2]].map { "\($0)/items/\(index)" } }
        let records = try run(head + rest, delay: 0.2, concurrency: 4)
        let urls = records.compactMap { $0["url"] as? String }
        #expect(urls.count == 12)
        #expect(Set(urls) == Set(head + rest), "every URL recorded once")
        #expect(records.allSatisfy { $0["status"] as? Int == 200 })
        // The head's host gets a turn every 0.2 s; the others' four URLs are all done before its
        // third, instead of queueing behind its URLs in the slots in flight.
        let thirdOfHead = try #require(urls.firstIndex(of: head[2]))
        let lastOfRest = try #require(rest.compactMap { urls.firstIndex(of: $0) }.max())
        #expect(lastOfRest < thirdOfHead, "records in order: \(urls)")
        // Within the paced host, input order.
        #expect(urls.filter { $0.hasPrefix(bases[0] + "/") } == head)
    }

    @Test func commandTakesTheOptionsAndRefusesBadValues() throws {
        let server = LoopbackHTTPServer()
        defer { server.stop() }
        let base = "http://127.0.0.1:\(try server.start())"
        let urls = (1...3).map { "\(base)/items/\($0)" }
        let paced = try runUVFetch(["--quiet", "--delay-per-host", "0.05", "--rate-per-host", "50"] + urls)
        #expect(paced.status == ExitStatus.success, "\(paced.stderr)")
        #expect(paced.stdout.contains("3 requests in "))
        for bad in [["--delay-per-host", "-1"], ["--rate-per-host", "0"], ["--rate-per-host", "nan"], ["--delay-per-host", "inf"]] {
            #expect(try runUVFetch(bad + urls).status == ExitStatus.usage, "\(bad)")
        }
    }
}
