import ArgumentParser
import Foundation
import Testing
import Synchronization
import UVFetchCore
import UVNetworking

/// The curl-like options, parsed from real command lines and checked at httpbin's echo.
@Suite(.tags(.nginx), .serialized) struct RequestOptionsTests {
    /// What the warcinfo names as the User-Agent is what the requests send: -H's last one wins
    /// over -A, as in `makeRequest`.
    @Test func sentUserAgentIsWhatTheRequestCarries() throws {
        for arguments in [[], ["-A", "bot/2 (+https://example.test)"], ["-A", "x", "-H", "user-agent: one", "-H", "User-Agent: two"]] {
            let options = try RequestOptions.parse(arguments)
            let request = options.makeRequest(for: URL(string: "http://example.test/")!, body: try options.body())
            #expect(options.sentUserAgent == request.value(forHTTPHeaderField: "User-Agent"), "\(arguments)")
        }
        #expect(try RequestOptions.parse(["-A", "x", "-H", "User-Agent: two"]).sentUserAgent == "two")
    }

    @Test func headersDataUserAndMethodReachTheServer() throws {
        let base = try TestServers.httpbin().baseURL
        let options = try RequestOptions.parse(["-X", "PUT", "-H", "X-Uvfetch: one two", "-H", "Accept: text/plain",
                                                "-d", "a=1&b=2", "-u", "ann:secret"])
        let body = try options.body()
        let request = options.makeRequest(for: URL(string: "\(base)/anything")!, body: body)
        let echo = try fetchJSON(request)
        #expect(echo["method"] as? String == "PUT")
        let headers = try #require(echo["headers"] as? [String: Any])
        #expect(headers["X-Uvfetch"] as? String == "one two")
        #expect(headers["Accept"] as? String == "text/plain")
        #expect(headers["Authorization"] as? String == "Basic " + Data("ann:secret".utf8).base64EncodedString())
        #expect((echo["form"] as? [String: Any])?["b"] as? String == "2")
    }

    @Test func dataBinaryReadsAFileAndPostsByDefault() throws {
        let base = try TestServers.httpbin().baseURL
        let file = temporaryFile("body.bin")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data("raw body\n".utf8).write(to: file)
        let options = try RequestOptions.parse(["--data-binary", "@\(file.path)"])
        let echo = try fetchJSON(options.makeRequest(for: URL(string: "\(base)/anything")!, body: try options.body()))
        #expect(echo["method"] as? String == "POST")
        #expect(echo["data"] as? String == "raw body\n")
        // POST: never retried, whatever --retries says.
        let request = options.makeRequest(for: URL(string: "\(base)/anything")!, body: nil)
        #expect(options.retryPolicy.retryDecision(for: request, attempt: 1, response: nil,
                                                  error: NetworkingError(.requestTimeout, "t"), now: Date()) == .doNotRetry)
    }

    @Test func timeoutIsAWholeRequestLimitAsCurlsMaxTime() throws {
        let request = try RequestOptions.parse(["--timeout", "2.5"]).makeRequest(for: URL(string: "http://h/")!, body: nil)
        #expect(request.totalTimeoutInterval == 2.5)
        #expect(request.timeoutInterval == .infinity, "no inactivity timeout, as curl has none")
        #expect(try RequestOptions.parse([]).makeRequest(for: URL(string: "http://h/")!, body: nil).totalTimeoutInterval == 60)
    }

    @Test func badValuesAreUsageErrors() {
        #expect(throws: (any Error).self) { try RequestOptions.parse(["-H", "no colon"]) }
        #expect(throws: (any Error).self) { try RequestOptions.parse(["-u", "nopassword"]) }
        #expect(throws: (any Error).self) { try RequestOptions.parse(["-d", "x", "--data-binary", "y"]) }
        #expect(throws: (any Error).self) { try RequestOptions.parse(["--timeout", "0"]) }
        #expect(throws: FetchInputError.self) { try RequestOptions.parse(["--data-binary", "@/nonexistent/file"]).body() }
    }

    @Test func resolveTakesCurlsSyntaxWithSeveralAddresses() throws {
        var configuration = SessionConfiguration()
        try RequestOptions.parse(["--resolve", "a.test:443:::1,127.0.0.1", "--resolve", "B.test:*:[::1]"]).apply(to: &configuration)
        #expect(configuration.hostAddressOverrides == ["a.test": "::1,127.0.0.1", "B.test": "[::1]"])
        for bad in ["a.test", "a.test:80", "a.test:80:", ":80:127.0.0.1", "a.test:http:127.0.0.1", "a.test:99999:127.0.0.1"] {
            #expect(throws: (any Error).self, "\(bad)") { try RequestOptions.parse(["--resolve", bad]) }
        }
    }

    @Test func dnsTimeoutSetsTheSessionsLookUpLimit() throws {
        var configuration = SessionConfiguration()
        try RequestOptions.parse([]).apply(to: &configuration)
        #expect(configuration.dnsTimeout == 5)
        try RequestOptions.parse(["--dns-timeout", "2.5"]).apply(to: &configuration)
        #expect(configuration.dnsTimeout == 2.5)
        for bad in ["0", "-1", "inf", "nan"] {
            #expect(throws: (any Error).self, "\(bad)") { try RequestOptions.parse(["--dns-timeout", bad]) }
        }
    }

    @Test func proxyOptionsReplaceOrNarrowTheEnvironment() throws {
        var configuration = SessionConfiguration()
        configuration.proxy = ProxyConfiguration.environment(["http_proxy": "http://env.example:3128"])
        try RequestOptions.parse(["--noproxy", "a.example, .b.example"]).apply(to: &configuration)
        #expect(configuration.proxy.httpProxy == URL(string: "http://env.example:3128"))
        #expect(configuration.proxy.noProxy == ["a.example", ".b.example"])
        #expect(configuration.proxy.bypassesLoopback)

        try RequestOptions.parse(["-x", "127.0.0.1:8888"]).apply(to: &configuration)
        #expect(configuration.proxy.httpProxy == URL(string: "http://127.0.0.1:8888"))
        #expect(configuration.proxy.httpsProxy == URL(string: "http://127.0.0.1:8888"))
        #expect(configuration.proxy.noProxy.isEmpty)
        #expect(!configuration.proxy.bypassesLoopback)

        #expect(throws: (any Error).self) { try RequestOptions.parse(["-x", "https://127.0.0.1:8888"]) }
        #expect(throws: (any Error).self) { try RequestOptions.parse(["--proxy", "http://"]) }
    }

    @Test func tlsOptionsMakeAPolicy() throws {
        #expect(try RequestOptions.parse([]).securityPolicy() == nil)
        let insecure = try #require(try RequestOptions.parse(["--insecure"]).securityPolicy())
        #expect(insecure.allowInvalidCertificates && !insecure.validatesDomainName)
        let first = Data(repeating: 1, count: 32).base64EncodedString()
        let second = Data(repeating: 2, count: 32).base64EncodedString()
        let pinned = try #require(try RequestOptions.parse(["--pin-sha256", first, "--pin-sha256", second]).securityPolicy())
        #expect(pinned.pinningMode == .publicKey)
        #expect(pinned.pinnedPublicKeyHashes == [first, second])
        #expect(throws: (any Error).self) { try RequestOptions.parse(["--pin-sha256", "AAAA"]) }
    }

    @Test func retriesResendIdempotentRequestsOn5xx() throws {
        let base = try TestServers.httpbin().baseURL
        let (_, records, _) = try runFetch(["\(base)/status/503"], options: ["--retries", "2"])
        #expect(records.first?["attempts"] as? Int == 3)
        #expect(records.first?["status"] as? Int == 503)
        let (_, posted, _) = try runFetch(["\(base)/status/503"], options: ["--retries", "2", "-X", "POST"])
        #expect(posted.first?["attempts"] as? Int == 1)
    }

    @Test func retryOptionsMakeTheLibrarysPolicy() throws {
        let policy = try RequestOptions.parse(["--retries", "3", "--retry-max-wait", "7.5"]).retryPolicy
        #expect(policy.retryLimit == 3)
        #expect(policy.maximumRetryAfter == 7.5)
        #expect(policy.retryableStatusCodes == [408, 429, 500, 502, 503, 504])
        #expect(throws: (any Error).self) { try RequestOptions.parse(["--retry-max-wait", "-1"]) }
    }

    /// Sends `request` on a fresh manager and decodes the JSON body.
    private func fetchJSON(_ request: UVNetworking.Request) throws -> [String: Any] {
        let manager = SessionManager()
        manager.completionQueue = DispatchQueue(label: "test.options")
        manager.responseSerializer = HTTPResponseSerializer()
        let result = Mutex<Data?>(nil)
        let done = DispatchSemaphore(value: 0)
        manager.dataTask(with: request, completionHandler: { _, object, _ in
            result.withLock { $0 = object as? Data }
            done.signal()
        }).resume()
        done.wait()
        manager.invalidateSessionCancelingTasks(false, resetSession: false)
        let data = try #require(result.withLock { $0 })
        return try #require(JSONSerialization.jsonObject(with: data) as? [String: Any])
    }
}
