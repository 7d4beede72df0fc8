import Foundation
import Testing
@testable import UVFetchCore
import UVNetworking

/// uvfetch's HTTP versions, with curl's option names, against nghttpd: each record says the
/// protocol its response came over, and the summary counts them.
@Suite(.tags(.nginx)) struct FetchProtocolTests {
    @Test func priorKnowledgeRecordsH2() throws {
        let server = try TestServers.nghttpd()
        let urls = (0..<20).map { _ in server.url("/hello.txt").absoluteString }
        let (outcome, records, _) = try runFetch(urls, options: ["--http2-prior-knowledge"], concurrency: 8)
        #expect(outcome.statistics.succeeded == 20)
        #expect(records.allSatisfy { $0["protocol"] as? String == "h2" })
        #expect(outcome.statistics.protocols == ["h2": 20])
        #expect(outcome.statistics.summary(seconds: 1).contains("protocols: h2 20"))
    }

    /// `--quiet` writes no record and collects no metrics: the summary still counts protocols.
    @Test(arguments: [(["--http2-prior-knowledge"], "h2"), (["--http1.1"], "http/1.1")])
    func quietRunsCountProtocolsToo(_ options: [String], _ spoken: String) throws {
        let server = try TestServers.nghttpd()
        let nginx = try TestServers.nginx().baseURL
        let urls = (0..<12).map { _ in spoken == "h2" ? server.url("/hello.txt").absoluteString : "\(nginx)/hello" }
        var settings = FetchRunner.Settings()
        settings.concurrency = 4
        settings.printsLines = false
        let runner = FetchRunner(options: try RequestOptions.parse(options), settings: settings, writer: nil, outputDirectory: nil) { _ in }
        let outcome = try runner.run(try URLInput(arguments: urls + ["http://127.0.0.1:\(try TestServers.freeLoopbackPort())/"], inputPath: nil))
        #expect(outcome.statistics.succeeded == 12)
        #expect(outcome.statistics.protocols == [spoken: 12], "a failure without a response counts for no protocol")
        #expect(outcome.statistics.summary(seconds: 1).contains("protocols: \(spoken) 12"))
    }

    @Test func plainHTTPIsHTTP11ByDefaultAndAFailureHasNoProtocol() throws {
        let base = try TestServers.nginx().baseURL
        let port = try TestServers.freeLoopbackPort()
        let (_, records, _) = try runFetch(["\(base)/hello", "http://127.0.0.1:\(port)/"])
        let byURL = Dictionary(uniqueKeysWithValues: records.map { ($0["url"] as! String, $0) })
        #expect(byURL["\(base)/hello"]?["protocol"] as? String == "http/1.1")
        #expect(byURL["http://127.0.0.1:\(port)/"]?["protocol"] is NSNull)
    }

    @Test func theVersionOptionsExcludeEachOther() {
        #expect(throws: (any Error).self) { try RequestOptions.parse(["--http1.1", "--http2-prior-knowledge"]) }
        #expect((try? RequestOptions.parse(["--http1.1"]))?.httpVersion == .http1_1)
        #expect((try? RequestOptions.parse([]))?.httpVersion == .http2)
    }
}
