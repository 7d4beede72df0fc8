import Foundation
import Testing
@testable import UVNetworking

extension EndToEnd {
    /// Every reply of curl's test suite, served byte for byte, against the outcome decided for
    /// it in `CurlReplyExpectations` (docs/conformance.md says why, group by group).
    ///
    /// `make conformance` runs only this suite. Set `UVN_CURL_REPLIES_DUMP=1` to print the
    /// outcomes as table rows (to review a change of behaviour, not to copy blindly).
    @Suite(.tags(.loopback), .enabled(if: CurlReplyCorpus.isAvailable,
                    "no curl-replies corpus at ../shared/conformance/curl-replies (or UVN_CURL_REPLIES): skipped"))
    struct CurlReplies {
        /// Replies that never end (the server keeps the connection open) run into this; the
        /// rest answer in milliseconds.
        static let timeout: TimeInterval = 1.5
        /// Cases in flight at once: each has its own server with a thread per connection.
        static let concurrency = 80

        /// What one case produced.
        struct Observed: CustomStringConvertible {
            var status: Int?
            var body: [UInt8]
            var error: NetworkingError?

            var description: String {
                if let error { return "failure(.\(error.code)) — \(error)" }
                return "response(status: \(status ?? -1), bytes: \(body.count))"
            }
        }

        @Test func everyReplyHasTheDecidedOutcome() throws {
            let corpus = try CurlReplyCorpus.load()
            let expectations = CurlReplyExpectations.table
            let harness = ClientHarness { configuration in
                // No proxy from the environment, and no DNS: the one name a reply redirects to
                // (1270's moo.moo.moo) fails as it would in DNS, without asking it.
                configuration.proxy = .none
                configuration.hostAddressOverrides = ["moo.moo.moo": "not-an-address"]
            }
            var observed: [Int: Observed] = [:]
            for batch in stride(from: 0, to: corpus.cases.count, by: Self.concurrency) {
                let cases = corpus.cases[batch..<min(corpus.cases.count, batch + Self.concurrency)]
                var running: [(CurlReplyCorpus.Case, CurlReplyServer, (Double) -> Outcome?)] = []
                for testCase in cases {
                    let server = try CurlReplyServer(testCase, replies: try corpus.replies(of: testCase))
                    guard let url = testCase.url(port: server.port) else {
                        Issue.record("test \(testCase.test): URL \(testCase.url) does not parse")
                        server.stop()
                        continue
                    }
                    var request = Request(url: url, timeoutInterval: Self.timeout)
                    request.method = testCase.method == "HEAD" ? .head : .get
                    let (task, wait) = harness.makeTask(request)
                    task.resume()
                    running.append((testCase, server, wait))
                }
                for (testCase, server, wait) in running {
                    let outcome = wait(Self.timeout + 10)
                    server.stop()
                    guard let outcome else {
                        Issue.record("test \(testCase.test) (\(testCase.title)): no outcome within \(Self.timeout + 10) s")
                        continue
                    }
                    #expect(outcome.calls == 1, "test \(testCase.test): completion called \(outcome.calls) times")
                    observed[testCase.test] = Observed(status: outcome.status, body: outcome.data.map { [UInt8]($0) } ?? [],
                                                       error: outcome.error as? NetworkingError)
                }
            }
            harness.finish()

            if ProcessInfo.processInfo.environment["UVN_CURL_REPLIES_DUMP"] == "1" {
                for testCase in corpus.cases {
                    guard let seen = observed[testCase.test] else { continue }
                    print("CURLREPLY \(testCase.test): .\(seen)  // \(testCase.title)")
                }
            }
            for testCase in corpus.cases {
                guard let seen = observed[testCase.test] else { continue }
                guard let expected = expectations[testCase.test] else {
                    Issue.record("test \(testCase.test) (\(testCase.title)) has no row in CurlReplyExpectations; observed \(seen)")
                    continue
                }
                #expect(expected.matches(seen), "test \(testCase.test) (\(testCase.title)): expected \(expected), observed \(seen)")
            }
            let unknown = Set(expectations.keys).subtracting(corpus.cases.map(\.test))
            #expect(unknown.isEmpty, "rows for tests not in the corpus: \(unknown.sorted())")
        }

        @Test(arguments: [("/want/11", 0), ("/want/data/110002.txt?coolsite=yes", 2), ("/15630001", 1),
                          ("/want?uri=http://anything/276?secondq/276", 0), ("/", 0), ("/junk", 0), ("/hello?", 0)])
        func partChosenAsCurlsServerDoes(target: String, part: Int) {
            #expect(CurlReplyServer.part(of: target) == part)
        }
    }
}
