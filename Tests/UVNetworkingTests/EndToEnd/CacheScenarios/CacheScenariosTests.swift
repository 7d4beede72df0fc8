import Dispatch
import Foundation
import Synchronization
import Testing
@testable import UVNetworking

extension EndToEnd {
    /// The web-platform-tests' HTTP cache scenarios (`CacheScenarioCorpus`), replayed by their
    /// own origin (`serve.py`) against a session with an `HTTPCache`: every scenario that
    /// applies to a private client cache must pass; those left out are listed in
    /// `CacheScenarioDecisions` with the reason (docs/conformance.md has the same list).
    ///
    /// `make conformance` runs it with the curl replies. `UVN_HTTP_CACHE_DUMP=1` prints each
    /// scenario's result.
    @Suite(.tags(.loopback), .serialized, .enabled(if: CacheScenarioCorpus.isAvailable,
                    "no http-cache scenarios at ../shared/conformance/http-cache (or UVN_HTTP_CACHE_SCENARIOS): skipped"))
    struct CacheScenarios {
        /// The replay origin: serve.py on a port of its own, logging what reaches it.
        final class Origin: @unchecked Sendable {
            let port: Int
            let log: String
            private let process: SupervisedProcess

            init(corpus: CacheScenarioCorpus) throws {
                let directory = try TestServers.makeTemporaryDirectory(prefix: "uvnetworking-http-cache")
                log = directory + "/seen.jsonl"
                var lastError = ""
                for _ in 0..<5 {
                    let port = try TestServers.freeLoopbackPort()
                    let process = try SupervisedProcess.launch(
                        ["/usr/bin/python3", corpus.directory.appendingPathComponent("serve.py").path, "--port", String(port), "--log", log],
                        directory: directory)
                    let deadline = monotonicSeconds() + 30
                    while monotonicSeconds() < deadline, process.exitStatus == nil {
                        if process.output().contains("serving") {
                            self.port = port
                            self.process = process
                            return
                        }
                        usleep(20_000)
                    }
                    lastError = process.output()
                    process.release()
                }
                throw TestServerError(description: "serve.py did not start: \(lastError)")
            }

            /// The requests that reached the origin for one scenario of one run, in order.
            func seen(run: String, file: String, test: String) -> [[String: Any]] {
                guard let text = try? String(contentsOfFile: log, encoding: .utf8) else { return [] }
                return text.split(separator: "\n").compactMap { line in
                    guard let entry = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                          entry["run"] as? String == run, entry["file"] as? String == file, entry["test"] as? String == test else { return nil }
                    return entry
                }
            }

            func stop() { process.release() }
        }

        /// What went wrong in one scenario; empty when it passed.
        static func run(_ scenario: CacheScenarioCorpus.Scenario, origin: Origin, loop: EventLoop, run: String) -> [String] {
            var configuration = SessionConfiguration()
            configuration.proxy = .none
            let cache = HTTPCache(memoryCapacity: 8 << 20)
            configuration.cache = cache
            let manager = SessionManager(configuration: configuration, loop: loop)
            manager.completionQueue = DispatchQueue(label: "cache-scenarios")
            manager.responseSerializer = AcceptAllSerializer()
            defer { manager.invalidateSessionCancelingTasks(true, resetSession: false) }
            let base = "http://127.0.0.1:\(origin.port)/\(run)/\(scenario.file)/\(scenario.id)"
            var problems: [String] = []
            for (index, step) in scenario.requests.enumerated() {
                let before = origin.seen(run: run, file: scenario.file, test: scenario.id).count
                var request = Request(url: URL(string: base + (step.target.map { "?target=\($0)" } ?? ""))!, timeoutInterval: 10)
                request.method = .init(step.method ?? "GET") ?? .get
                for field in step.request_headers ?? [] where field.count == 2 {
                    request.addValue(field[1], forHTTPHeaderField: field[0])
                }
                if let body = step.request_body { request.body = Data(body.utf8) }
                if let mode = step.cache_mode {
                    guard let policy = Request.CachePolicy(fetchMode: mode) else {
                        problems.append("request \(index + 1): unknown cache mode \(mode)")
                        break
                    }
                    request.cachePolicy = policy
                }
                let done = DispatchSemaphore(value: 0)
                let result = Mutex<(HTTPResponse?, Data?, (any Error)?)>((nil, nil, nil))
                manager.dataTask(with: request) { response, object, error in
                    result.withLock { $0 = (response, object as? Data, error) }
                    done.signal()
                }.resume()
                guard done.wait(timeout: .now() + 20) == .success else {
                    problems.append("request \(index + 1): no completion")
                    break
                }
                // Stores run on a worker after the completion: the next request must find them.
                cache.flush()
                let (response, data, error) = result.withLock { $0 }
                let seen = origin.seen(run: run, file: scenario.file, test: scenario.id)
                let reached = seen.count > before
                let last = reached ? seen.last : nil
                if let expect = step.expect {
                    if let type = expect.type {
                        let headers = last?["headers"] as? [String: String] ?? [:]
                        switch type {
                        case "cached" where reached: problems.append("request \(index + 1): expected cached, reached the origin")
                        case "not_cached" where !reached: problems.append("request \(index + 1): expected not_cached, served from the cache")
                        case "etag_validated" where !reached || headers["if-none-match"] == nil:
                            problems.append("request \(index + 1): expected an If-None-Match validation, reached=\(reached)")
                        case "lm_validated" where !reached || headers["if-modified-since"] == nil:
                            problems.append("request \(index + 1): expected an If-Modified-Since validation, reached=\(reached)")
                        default: break
                        }
                    }
                    if let status = expect.status, response?.status.code != status {
                        problems.append("request \(index + 1): status \(response?.status.code ?? -1), expected \(status) (\(error.map { "\($0)" } ?? "no error"))")
                    }
                    if let text = expect.response_text, String(decoding: data ?? Data(), as: UTF8.self) != text {
                        problems.append("request \(index + 1): body \(String(decoding: data ?? Data(), as: UTF8.self)), expected \(text)")
                    }
                    for field in expect.response_headers ?? [] where field.count == 2 {
                        let value = HTTPField.Name(field[0]).flatMap { response?.headerFields[$0] }
                        if value != field[1] { problems.append("request \(index + 1): response \(field[0]): \(value ?? "absent"), expected \(field[1])") }
                    }
                    for field in expect.request_headers ?? [] where field.count == 2 {
                        let headers = last?["headers"] as? [String: String] ?? [:]
                        if headers[field[0].lowercased()] != field[1] {
                            problems.append("request \(index + 1): origin got \(field[0]): \(headers[field[0].lowercased()] ?? "absent"), expected \(field[1])")
                        }
                    }
                }
                if let pause = step.pause_after_s { Thread.sleep(forTimeInterval: pause) }
            }
            return problems
        }

        @Test func everyScenarioThatAppliesPasses() throws {
            let corpus = try CacheScenarioCorpus.load()
            let origin = try Origin(corpus: corpus)
            defer { origin.stop() }
            let loop = try EventLoop(name: "cache-scenarios")
            defer { loop.shutdown() }
            let run = UUID().uuidString.prefix(8).lowercased()
            let dump = ProcessInfo.processInfo.environment["UVN_HTTP_CACHE_DUMP"] == "1"
            var ran = 0
            // Scenarios pause for seconds: several at once, each with its own session and cache.
            let results = Mutex<[String: [String]]>([:])
            let scenarios = corpus.scenarios.filter { CacheScenarioDecisions.leftOut[$0.file + "/" + $0.id] == nil }
            DispatchQueue.concurrentPerform(iterations: scenarios.count) { index in
                let scenario = scenarios[index]
                let problems = Self.run(scenario, origin: origin, loop: loop, run: String(run))
                results.withLock { $0[scenario.file + "/" + scenario.id] = problems }
            }
            ran = scenarios.count
            for scenario in corpus.scenarios {
                let key = scenario.file + "/" + scenario.id
                if let reason = CacheScenarioDecisions.leftOut[key] {
                    if dump { print("left out \(key): \(reason)") }
                    continue
                }
                let problems = results.withLock { $0[key] } ?? ["not run"]
                if dump { print("\(problems.isEmpty ? "pass" : "FAIL") \(key)\(scenario.optional.map { " (optional: \($0))" } ?? "") \(problems.joined(separator: "; "))") }
                if !problems.isEmpty {
                    Issue.record("\(key) (\(scenario.name)): \(problems.joined(separator: "; "))")
                }
            }
            // Every scenario is either run or left out with a reason, and the list names no
            // scenario the corpus does not have.
            #expect(ran + CacheScenarioDecisions.leftOut.count == corpus.scenarios.count)
            #expect(corpus.scenarios.count >= 115)
        }
    }
}
