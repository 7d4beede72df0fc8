import Dispatch
import Foundation
import HTTPTypes
import Synchronization
import Testing
@testable import UVNetworking

/// `SessionConfiguration.cache` against a scripted origin on loopback: what is served from the
/// store, validated, stored, refused and invalidated, the request policies, coalescing of
/// concurrent misses, and the session's `dataTaskWillCacheResponse` hook.
@Suite(.tags(.loopback)) struct SessionCacheTests {
    /// An origin that answers with `respond` and keeps every request it saw.
    private final class Origin: Sendable {
        final class Log: Sendable { let requests = Mutex<[ScriptedRequest]>([]) }
        let server: ScriptedServer
        private let log: Log

        init(_ respond: @escaping @Sendable (ScriptedRequest) -> String) throws {
            let log = Log()
            self.log = log
            server = try ScriptedServer { connection in
                try connection.serveKeepAlive { request in
                    log.requests.withLock { $0.append(request) }
                    return respond(request)
                }
            }
        }

        var requests: [ScriptedRequest] { log.requests.withLock { $0 } }
        func url(_ path: String = "/") -> String { "http://127.0.0.1:\(server.port)\(path)" }
    }

    private static func harness(_ cache: HTTPCache = HTTPCache(memoryCapacity: 1 << 20)) -> ClientHarness {
        ClientHarness { $0.cache = cache }
    }

    private static func request(_ url: String, policy: Request.CachePolicy = .useProtocolCachePolicy,
                                fields: [(String, String)] = []) -> Request {
        var request = ClientHarness.request(url, fields: fields)
        request.cachePolicy = policy
        return request
    }

    /// Runs `request` and returns its outcome and the task's cache outcome.
    private static func fetch(_ harness: ClientHarness, _ request: Request) -> (Outcome, CacheOutcome?) {
        let (task, wait) = harness.makeTask(request)
        task.resume()
        guard let outcome = wait(20) else {
            Issue.record("the task did not complete")
            task.cancel()
            return (Outcome(response: nil, object: nil, error: nil, calls: 0), nil)
        }
        return (outcome, task.cacheOutcome)
    }

    @Test func aFreshResponseAnswersWithoutTheOrigin() throws {
        let origin = try Origin { _ in ScriptedResponse.text("stored body", headers: [("Cache-Control", "max-age=60")]) }
        let harness = Self.harness()
        let (first, firstOutcome) = Self.fetch(harness, Self.request(origin.url()))
        let (second, secondOutcome) = Self.fetch(harness, Self.request(origin.url()))
        #expect(first.text == "stored body" && firstOutcome == .miss)
        #expect(second.text == "stored body" && secondOutcome == .hit)
        #expect(second.status == 200)
        #expect(second.response?.headerFields[.age] != nil)
        #expect(origin.requests.count == 1)
        origin.server.stop()
        harness.finish()
    }

    /// A HEAD is answered from a stored GET response while that is fresh (its head, no body);
    /// when it is stale the HEAD goes to the origin as it is, and the GET response stays.
    @Test func aHEADIsAnsweredFromAFreshStoredGET() throws {
        let origin = try Origin { request in
            let maxAge = request.target == "/stale" ? 0 : 60
            let head = "HTTP/1.1 200 OK\r\nCache-Control: max-age=\(maxAge)\r\nETag: \"v1\"\r\nContent-Length: 11\r\n\r\n"
            return request.method == "HEAD" ? head : head + "stored body"
        }
        let harness = Self.harness()
        _ = Self.fetch(harness, Self.request(origin.url("/fresh")))
        let (head, outcome) = Self.fetch(harness, ClientHarness.request(origin.url("/fresh"), method: .head))
        #expect(head.status == 200 && outcome == .hit)
        #expect(head.data?.isEmpty ?? true)
        #expect(head.response?.headerFields[.contentLength] == "11")
        #expect(origin.requests.count == 1)

        _ = Self.fetch(harness, Self.request(origin.url("/stale")))
        let (staleHead, staleOutcome) = Self.fetch(harness, ClientHarness.request(origin.url("/stale"), method: .head))
        #expect(staleHead.status == 200 && staleOutcome == .miss)
        #expect(origin.requests.last?.method == "HEAD")
        #expect(origin.requests.last?.header("If-None-Match") == nil)
        // The stored GET response is still there, and validated by the next GET.
        _ = Self.fetch(harness, Self.request(origin.url("/stale")))
        #expect(origin.requests.last?.method == "GET")
        #expect(origin.requests.last?.header("If-None-Match") == "\"v1\"")
        #expect(origin.requests.count == 4)
        origin.server.stop()
        harness.finish()
    }

    /// A HEAD's 200 from the origin updates the stored GET response it confirms (same ETag
    /// and length: its fields, freshness included, are taken) and drops one it contradicts
    /// (RFC 9111 §4.3.5), in memory and on disk.
    @Test(arguments: [false, true]) func aHEADsAnswerFreshensOrDropsTheStoredGET(onDisk: Bool) throws {
        let origin = try Origin { request in
            let tag = request.target == "/changed" && request.method == "HEAD" ? "v2" : "v1"
            let control = request.method == "HEAD" ? "max-age=60" : "max-age=0"
            let head = "HTTP/1.1 200 OK\r\nCache-Control: \(control)\r\nETag: \"\(tag)\"\r\nX-From: \(request.method)\r\n"
                + "Content-Length: 11\r\n\r\n"
            return request.method == "HEAD" ? head : head + "stored body"
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("uvn-session-head-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = onDisk ? try HTTPCache(memoryCapacity: 0, diskCapacity: 1 << 20, directory: directory) : HTTPCache(memoryCapacity: 1 << 20)
        let harness = Self.harness(cache)
        for path in ["/same", "/changed"] {
            _ = Self.fetch(harness, Self.request(origin.url(path)))
            let (head, outcome) = Self.fetch(harness, ClientHarness.request(origin.url(path), method: .head))
            #expect(head.status == 200 && outcome == .miss)
        }
        cache.flush()
        // Confirmed: the stored GET response took the HEAD's max-age and is fresh now.
        let (same, sameOutcome) = Self.fetch(harness, Self.request(origin.url("/same")))
        #expect(sameOutcome == .hit && same.text == "stored body")
        #expect(same.response?.headerFields[HTTPField.Name("X-From")!] == "HEAD")
        #expect(same.response?.headerFields[.contentLength] == "11")
        // Contradicted: dropped, so the next GET is a plain miss, not a validation.
        let (changed, changedOutcome) = Self.fetch(harness, Self.request(origin.url("/changed")))
        #expect(changedOutcome == .miss && changed.text == "stored body")
        #expect(origin.requests.last?.method == "GET" && origin.requests.last?.header("If-None-Match") == nil)
        #expect(origin.requests.count == 5)
        origin.server.stop()
        harness.finish()
    }

    @Test func aStaleResponseIsValidatedAndA304ReusesItsBody() throws {
        let origin = try Origin { request in
            if request.header("If-None-Match") == "\"v1\"" {
                return "HTTP/1.1 304 Not Modified\r\nETag: \"v1\"\r\nX-Checked: yes\r\nCache-Control: max-age=0\r\n\r\n"
            }
            return ScriptedResponse.text("versioned", headers: [("Cache-Control", "max-age=0"), ("ETag", "\"v1\""), ("X-Checked", "no")])
        }
        let harness = Self.harness()
        _ = Self.fetch(harness, Self.request(origin.url()))
        let (second, outcome) = Self.fetch(harness, Self.request(origin.url()))
        #expect(outcome == .revalidated)
        #expect(second.status == 200)
        #expect(second.text == "versioned")
        #expect(second.response?.headerFields[HTTPField.Name("X-Checked")!] == "yes")
        #expect(origin.requests.count == 2)
        #expect(origin.requests.last?.header("If-None-Match") == "\"v1\"")
        // The 304's fields were stored: a third request validates again and sees them.
        let (third, _) = Self.fetch(harness, Self.request(origin.url()))
        #expect(third.text == "versioned")
        origin.server.stop()
        harness.finish()
    }

    @Test func aValidatedBodyWaitsWhileTheResponseHookHoldsIt() throws {
        let body = String(repeating: "0123456789abcdef", count: 20_000)
        let origin = try Origin { request in
            if request.header("If-None-Match") == "\"v1\"" { return "HTTP/1.1 304 Not Modified\r\nETag: \"v1\"\r\n\r\n" }
            return ScriptedResponse.text(body, headers: [("Cache-Control", "no-cache"), ("ETag", "\"v1\"")])
        }
        // Large enough for the entry (a store keeps entries up to a tenth of its capacity).
        let harness = Self.harness(HTTPCache(memoryCapacity: 16 << 20))
        _ = Self.fetch(harness, Self.request(origin.url()))
        let answered = Mutex(false)
        let chunks = Mutex<(count: Int, bytes: Int, beforeAnswer: Int)>((0, 0, 0))
        harness.manager.dataTaskDidReceiveResponse = { _, _ in
            Thread.sleep(forTimeInterval: 0.2)
            answered.withLock { $0 = true }
            return .allow
        }
        harness.manager.dataTaskDidReceiveData = { _, data in
            let early = !answered.withLock { $0 }
            chunks.withLock { $0 = ($0.count + 1, $0.bytes + data.count, $0.beforeAnswer + (early ? 1 : 0)) }
        }
        let (validated, outcome) = Self.fetch(harness, Self.request(origin.url()))
        #expect(outcome == .revalidated)
        #expect(validated.text == body)
        let seen = chunks.withLock { $0 }
        #expect(seen.count >= 2 && seen.bytes == body.utf8.count && seen.beforeAnswer == 0)
        // The 304's connection went back to its pool, reading while idle: it serves the next.
        #expect(Self.fetch(harness, Self.request(origin.url(), policy: .reloadIgnoringLocalCacheData)).0.text == body)
        #expect(harness.manager.openConnectionCount == 1)
        origin.server.stop()
        harness.finish()
    }

    @Test func aChangedResponseReplacesTheStoredOne() throws {
        let turn = Atomic(0)
        let origin = try Origin { _ in
            let n = turn.add(1, ordering: .relaxed).newValue
            return ScriptedResponse.text("version \(n)", headers: [("Cache-Control", "no-cache"), ("ETag", "\"v\(n)\"")])
        }
        let harness = Self.harness()
        _ = Self.fetch(harness, Self.request(origin.url()))
        let (second, outcome) = Self.fetch(harness, Self.request(origin.url()))
        #expect(second.text == "version 2" && outcome == .miss)
        #expect(origin.requests.last?.header("If-None-Match") == "\"v1\"")
        _ = Self.fetch(harness, Self.request(origin.url()))
        #expect(origin.requests.last?.header("If-None-Match") == "\"v2\"")
        origin.server.stop()
        harness.finish()
    }

    @Test func noStoreResponsesAndRequestsAreNeverKept() throws {
        let origin = try Origin { request in
            request.target == "/no-store"
                ? ScriptedResponse.text("secret", headers: [("Cache-Control", "no-store, max-age=60")])
                : ScriptedResponse.text("public", headers: [("Cache-Control", "max-age=60")])
        }
        let cache = HTTPCache(memoryCapacity: 1 << 20)
        let harness = Self.harness(cache)
        _ = Self.fetch(harness, Self.request(origin.url("/no-store")))
        let (_, outcome) = Self.fetch(harness, Self.request(origin.url("/no-store")))
        #expect(outcome == .miss)
        _ = Self.fetch(harness, Self.request(origin.url("/public"), fields: [("Cache-Control", "no-store")]))
        #expect(cache.currentMemoryUsage == 0)
        #expect(origin.requests.count == 3)
        origin.server.stop()
        harness.finish()
    }

    @Test func returnCacheDataDontLoadFailsWithoutTouchingTheNetwork() throws {
        let origin = try Origin { _ in ScriptedResponse.text("x") }
        let harness = Self.harness()
        let (outcome, cacheOutcome) = Self.fetch(harness, Self.request(origin.url(), policy: .returnCacheDataDontLoad))
        #expect(outcome.code == .resourceUnavailable)
        #expect(cacheOutcome == .miss)
        // The request's own only-if-cached: the cache answers 504 itself (RFC 9111 §5.2.1.7).
        let (onlyIfCached, _) = Self.fetch(harness, Self.request(origin.url(), fields: [("Cache-Control", "only-if-cached")]))
        #expect(onlyIfCached.status == 504 && onlyIfCached.error == nil)
        #expect(origin.requests.isEmpty)
        origin.server.stop()
        harness.finish()
    }

    @Test func thePoliciesDecideBetweenStoreAndOrigin() throws {
        let origin = try Origin { request in
            if request.header("If-None-Match") != nil { return "HTTP/1.1 304 Not Modified\r\nETag: \"e\"\r\n\r\n" }
            return ScriptedResponse.text("body", headers: [("Cache-Control", "max-age=0"), ("ETag", "\"e\"")])
        }
        let harness = Self.harness()
        _ = Self.fetch(harness, Self.request(origin.url()))
        // Stale, but force-cache takes it.
        let (forced, forcedOutcome) = Self.fetch(harness, Self.request(origin.url(), policy: .returnCacheDataElseLoad))
        #expect(forced.text == "body" && forcedOutcome == .hit)
        let (onlyCache, onlyCacheOutcome) = Self.fetch(harness, Self.request(origin.url(), policy: .returnCacheDataDontLoad))
        #expect(onlyCache.text == "body" && onlyCacheOutcome == .hit)
        #expect(origin.requests.count == 1)
        // reload: the origin, unconditionally.
        let (_, reloadOutcome) = Self.fetch(harness, Self.request(origin.url(), policy: .reloadIgnoringLocalCacheData))
        #expect(reloadOutcome == .bypass)
        #expect(origin.requests.last?.header("If-None-Match") == nil)
        // no-cache: validated.
        let (_, revalidated) = Self.fetch(harness, Self.request(origin.url(), policy: .reloadRevalidatingCacheData))
        #expect(revalidated == .revalidated)
        // no-store: neither looked up nor stored.
        let (_, bypassed) = Self.fetch(harness, Self.request(origin.url(), policy: .reloadWithoutCaching))
        #expect(bypassed == .bypass)
        #expect(origin.requests.count == 4)
        origin.server.stop()
        harness.finish()
    }

    @Test func maxStaleAcceptsAResponseThatWentStaleHere() throws {
        let origin = try Origin { request in
            request.target == "/pre-aged"
                ? ScriptedResponse.text("aged", headers: [("Cache-Control", "max-age=1"), ("Age", "5")])
                : ScriptedResponse.text("short", headers: [("Cache-Control", "max-age=1")])
        }
        let harness = Self.harness()
        _ = Self.fetch(harness, Self.request(origin.url("/short")))
        Thread.sleep(forTimeInterval: 1.5)
        let (stale, staleOutcome) = Self.fetch(harness, Self.request(origin.url("/short"), fields: [("Cache-Control", "max-stale=60")]))
        #expect(stale.text == "short" && staleOutcome == .hit)
        let (_, refused) = Self.fetch(harness, Self.request(origin.url("/short"), fields: [("Cache-Control", "max-stale=0")]))
        #expect(refused == .miss)
        // Stale when it arrived: max-stale does not serve it.
        _ = Self.fetch(harness, Self.request(origin.url("/pre-aged")))
        let (_, preAged) = Self.fetch(harness, Self.request(origin.url("/pre-aged"), fields: [("Cache-Control", "max-stale=60")]))
        #expect(preAged == .miss)
        #expect(origin.requests.count == 4)
        origin.server.stop()
        harness.finish()
    }

    @Test func anUnsafeRequestInvalidatesItsTarget() throws {
        let origin = try Origin { request in
            request.method == "POST" ? ScriptedResponse.text("posted") : ScriptedResponse.text("page", headers: [("Cache-Control", "max-age=60")])
        }
        let harness = Self.harness()
        _ = Self.fetch(harness, Self.request(origin.url("/item")))
        let (_, hit) = Self.fetch(harness, Self.request(origin.url("/item")))
        #expect(hit == .hit)
        let (_, post) = Self.fetch(harness, ClientHarness.request(origin.url("/item"), method: .post, body: "x"))
        #expect(post == .bypass)
        let (_, after) = Self.fetch(harness, Self.request(origin.url("/item")))
        #expect(after == .miss)
        #expect(origin.requests.count == 3)
        origin.server.stop()
        harness.finish()
    }

    @Test func varyKeepsOneResponsePerSelection() throws {
        let origin = try Origin { request in
            ScriptedResponse.text("for \(request.header("Accept") ?? "none")", headers: [("Cache-Control", "max-age=60"), ("Vary", "Accept")])
        }
        let harness = Self.harness()
        _ = Self.fetch(harness, Self.request(origin.url(), fields: [("Accept", "text/a")]))
        let (other, otherOutcome) = Self.fetch(harness, Self.request(origin.url(), fields: [("Accept", "text/b")]))
        #expect(other.text == "for text/b" && otherOutcome == .miss)
        let (first, firstOutcome) = Self.fetch(harness, Self.request(origin.url(), fields: [("Accept", "text/a")]))
        #expect(first.text == "for text/a" && firstOutcome == .hit)
        #expect(origin.requests.count == 2)
        origin.server.stop()
        harness.finish()
    }

    @Test func concurrentMissesShareOneOriginRequest() throws {
        let origin = try Origin { _ in
            Thread.sleep(forTimeInterval: 0.3)
            return ScriptedResponse.text("shared", headers: [("Cache-Control", "max-age=60")])
        }
        let harness = Self.harness()
        let tasks = (0..<100).map { _ in harness.makeTask(Self.request(origin.url("/shared"))) }
        for (task, _) in tasks { task.resume() }
        let outcomes = tasks.map { $0.wait(30) }
        #expect(outcomes.allSatisfy { $0?.text == "shared" })
        #expect(origin.requests.count == 1)
        let counts = Dictionary(grouping: tasks.map { $0.task.cacheOutcome }, by: { $0 }).mapValues(\.count)
        #expect(counts[.miss] == 1 && counts[.hit] == 99)
        origin.server.stop()
        harness.finish()
    }

    /// Misses of different variants (`Vary: Authorization`, a token per user) do not wait for
    /// each other's response, which would not answer them; misses of one variant still share.
    /// The origin holds each response until every user's request is in (or 3 s): met only when
    /// the five users' fetches run side by side. The cache learns that the URL varies from a
    /// response it stored, or (`sharedDisk`) from one another cache on its directory stored,
    /// as another process would.
    @Test(arguments: [false, true]) func concurrentMissesOfDifferentVariantsDoNotWaitForEachOther(sharedDisk: Bool) throws {
        let users = 5
        let inFlight = Mutex(Set<String>())
        let together = Atomic(0)
        let origin = try Origin { request in
            let user = request.header("Authorization") ?? "none"
            if user != "Bearer warm" {
                inFlight.withLock { _ = $0.insert(user) }
                if waitUntil(timeout: 3, { inFlight.withLock { $0.count } >= users }) { together.add(1, ordering: .relaxed) }
            }
            return ScriptedResponse.text("for \(user)", headers: [("Cache-Control", "private, max-age=60"), ("Vary", "Authorization")])
        }
        let warm = Self.request(origin.url("/me"), fields: [("Authorization", "Bearer warm")])
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("uvn-session-vary-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let harness: ClientHarness
        if sharedDisk {
            let other = try HTTPCache(memoryCapacity: 1 << 20, diskCapacity: 1 << 20, directory: directory)
            let otherHarness = Self.harness(other)
            _ = Self.fetch(otherHarness, warm)
            other.flush()
            otherHarness.finish()
            harness = Self.harness(try HTTPCache(memoryCapacity: 1 << 20, diskCapacity: 1 << 20, directory: directory))
            #expect(Self.fetch(harness, warm).1 == .hit)
        } else {
            harness = Self.harness()
            _ = Self.fetch(harness, warm)
        }
        let tasks = (0..<(users * 2)).map { n in
            harness.makeTask(Self.request(origin.url("/me"), fields: [("Authorization", "Bearer user\(n % users)")]))
        }
        for (task, _) in tasks { task.resume() }
        let outcomes = tasks.map { $0.wait(30) }
        for (n, outcome) in outcomes.enumerated() { #expect(outcome?.text == "for Bearer user\(n % users)") }
        #expect(origin.requests.count == 1 + users)
        #expect(together.load(ordering: .relaxed) == users)
        let counts = Dictionary(grouping: tasks.map { $0.task.cacheOutcome }, by: { $0 }).mapValues(\.count)
        #expect(counts[.miss] == users && counts[.hit] == users)
        origin.server.stop()
        harness.finish()
    }

    @Test func concurrentMissesOfAnUnstorableResponseAllReachTheOrigin() throws {
        let origin = try Origin { _ in
            Thread.sleep(forTimeInterval: 0.2)
            return ScriptedResponse.text("private to each", headers: [("Cache-Control", "no-store")])
        }
        let harness = Self.harness()
        let tasks = (0..<20).map { _ in harness.makeTask(Self.request(origin.url("/each"))) }
        for (task, _) in tasks { task.resume() }
        let outcomes = tasks.map { $0.wait(30) }
        #expect(outcomes.allSatisfy { $0?.text == "private to each" })
        #expect(origin.requests.count == 20)
        origin.server.stop()
        harness.finish()
    }

    @Test func aTaskWaitingForAnotherFetchCanBeCancelled() throws {
        let release = DispatchSemaphore(value: 0)
        let origin = try Origin { _ in
            _ = release.wait(timeout: .now() + 10)
            return ScriptedResponse.text("late", headers: [("Cache-Control", "max-age=60")])
        }
        let harness = Self.harness()
        let (leader, leaderWait) = harness.makeTask(Self.request(origin.url()))
        leader.resume()
        Thread.sleep(forTimeInterval: 0.2)
        let (waiter, waiterWait) = harness.makeTask(Self.request(origin.url()))
        waiter.resume()
        Thread.sleep(forTimeInterval: 0.1)
        waiter.cancel()
        let cancelled = waiterWait(5)
        #expect(cancelled?.code == .cancelled)
        release.signal()
        #expect(leaderWait(10)?.text == "late")
        #expect(cancelled?.calls == 1)
        origin.server.stop()
        harness.finish()
    }

    @Test func willCacheResponseCanChangeOrVetoWhatIsStored() throws {
        let origin = try Origin { request in
            ScriptedResponse.text("original \(request.target)", headers: [("Cache-Control", "max-age=60")])
        }
        let cache = HTTPCache(memoryCapacity: 1 << 20)
        let harness = Self.harness(cache)
        let stored = DispatchSemaphore(value: 0)
        harness.manager.dataTaskWillCacheResponse = { _, proposed in
            defer { stored.signal() }
            guard proposed.response.headerFields[.contentLength] != nil, !String(decoding: proposed.data, as: UTF8.self).hasSuffix("/veto") else {
                return nil
            }
            var changed = proposed
            changed.data = Data("changed".utf8)
            return changed
        }
        _ = Self.fetch(harness, Self.request(origin.url("/veto")))
        #expect(stored.wait(timeout: .now() + 5) == .success)
        let (again, againOutcome) = Self.fetch(harness, Self.request(origin.url("/veto")))
        #expect(again.text == "original /veto" && againOutcome == .miss)
        #expect(stored.wait(timeout: .now() + 5) == .success)
        _ = Self.fetch(harness, Self.request(origin.url("/keep")))
        #expect(stored.wait(timeout: .now() + 5) == .success)
        let (kept, keptOutcome) = Self.fetch(harness, Self.request(origin.url("/keep")))
        #expect(kept.text == "changed" && keptOutcome == .hit)
        #expect(cache.cachedResponse(for: Self.request(origin.url("/keep")))?.data == Data("changed".utf8))
        origin.server.stop()
        harness.finish()
    }

    @Test func aBodyLargerThanTheLargestEntryIsNotKept() throws {
        let big = String(repeating: "b", count: 200_000)
        let origin = try Origin { _ in ScriptedResponse.text(big, headers: [("Cache-Control", "max-age=60")]) }
        let cache = HTTPCache(memoryCapacity: 1 << 20, maximumEntrySize: 100_000)
        let harness = Self.harness(cache)
        let (first, _) = Self.fetch(harness, Self.request(origin.url()))
        #expect(first.data?.count == 200_000)
        let (_, outcome) = Self.fetch(harness, Self.request(origin.url()))
        #expect(outcome == .miss)
        #expect(cache.currentMemoryUsage == 0)
        origin.server.stop()
        harness.finish()
    }

    @Test func aStoredResponseIsPlayedInChunksToAStream() async throws {
        let body = String(repeating: "0123456789", count: 30_000)
        let origin = try Origin { _ in ScriptedResponse.text(body, headers: [("Cache-Control", "max-age=60")]) }
        let harness = Self.harness(HTTPCache(memoryCapacity: 8 << 20))
        _ = Self.fetch(harness, Self.request(origin.url()))
        let (response, bytes) = try await harness.manager.bytes(for: Self.request(origin.url()))
        #expect(response.status.code == 200)
        var received = 0
        for try await chunk in bytes { received += chunk.count }
        #expect(received == body.utf8.count)
        #expect(origin.requests.count == 1)
        origin.server.stop()
        harness.finish()
    }

    @Test func metricsSayAHitCameFromTheCache() throws {
        let origin = try Origin { _ in ScriptedResponse.text("m", headers: [("Cache-Control", "max-age=60")]) }
        let harness = Self.harness()
        let fetchTypes = Mutex<[TransactionMetrics.ResourceFetchType]>([])
        let collected = DispatchSemaphore(value: 0)
        harness.manager.taskDidFinishCollectingMetrics = { _, metrics in
            fetchTypes.withLock { $0 += metrics.transactions.map { $0.resourceFetchType } }
            collected.signal()
        }
        _ = Self.fetch(harness, Self.request(origin.url()))
        #expect(collected.wait(timeout: .now() + 5) == .success)
        _ = Self.fetch(harness, Self.request(origin.url()))
        #expect(collected.wait(timeout: .now() + 5) == .success)
        #expect(fetchTypes.withLock { $0 } == [.networkLoad, .localCache])
        origin.server.stop()
        harness.finish()
    }

    @Test func aDiskCacheAnswersANewSessionAndNeverWritesNoStoreBytes() throws {
        let origin = try Origin { request in
            request.target == "/secret"
                ? ScriptedResponse.text("secret", headers: [("Cache-Control", "no-store")])
                : ScriptedResponse.text("kept on disk", headers: [("Cache-Control", "max-age=60")])
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("uvn-session-cache-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let bodies = directory.appendingPathComponent("bodies").path
        do {
            let harness = Self.harness(try HTTPCache(memoryCapacity: 1 << 20, diskCapacity: 1 << 22, directory: directory))
            _ = Self.fetch(harness, Self.request(origin.url("/page")))
            _ = Self.fetch(harness, Self.request(origin.url("/secret")))
            _ = Self.fetch(harness, Self.request(origin.url("/page"), fields: [("Cache-Control", "no-store")]))
            harness.finish()
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: bodies).count == 1)
        // Another cache on the directory, as another run of a program would open it.
        let harness = Self.harness(try HTTPCache(memoryCapacity: 1 << 20, diskCapacity: 1 << 22, directory: directory))
        let (again, outcome) = Self.fetch(harness, Self.request(origin.url("/page")))
        #expect(again.text == "kept on disk" && outcome == .hit)
        #expect(origin.requests.count == 3)
        origin.server.stop()
        harness.finish()
    }

    @Test func aLargeBodyGoesToTheDiskAsItArrives() throws {
        let body = String((0..<(3 << 20)).map { _ in Character(UnicodeScalar(UInt8.random(in: 97...122))) })
        let origin = try Origin { _ in ScriptedResponse.text(body, headers: [("Cache-Control", "max-age=60")]) }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("uvn-session-spool-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = try HTTPCache(memoryCapacity: 1 << 20, diskCapacity: 64 << 20, directory: directory)
        let harness = Self.harness(cache)
        let (first, _) = Self.fetch(harness, Self.request(origin.url("/large")))
        #expect(first.data?.count == 3 << 20)
        cache.flush()
        let bodies = directory.appendingPathComponent("bodies").path
        let files = try FileManager.default.contentsOfDirectory(atPath: bodies)
        #expect(files.count == 1)
        #expect(cache.currentDiskUsage == 3 << 20)
        // Too large for the memory tier: from the disk.
        #expect(cache.currentMemoryUsage == 0)
        let (second, outcome) = Self.fetch(harness, Self.request(origin.url("/large")))
        #expect(outcome == .hit)
        #expect(second.text == body)
        #expect(origin.requests.count == 1)
        origin.server.stop()
        harness.finish()
    }

    @Test func aLargeStoredBodyIsPlayedFromItsFileAlsoAfterA304() async throws {
        let body = String((0..<(3 << 20)).map { _ in Character(UnicodeScalar(UInt8.random(in: 97...122))) })
        let origin = try Origin { request in
            if request.target == "/validate", request.header("If-None-Match") == "\"v1\"" {
                return "HTTP/1.1 304 Not Modified\r\nETag: \"v1\"\r\nCache-Control: no-cache\r\nX-Checked: yes\r\n\r\n"
            }
            let control = request.target == "/validate" ? "no-cache" : "max-age=60"
            return ScriptedResponse.text(body, headers: [("Cache-Control", control), ("ETag", "\"v1\"")])
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("uvn-session-file-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = try HTTPCache(memoryCapacity: 1 << 20, diskCapacity: 64 << 20, directory: directory)
        let harness = Self.harness(cache)
        for path in ["/fresh", "/validate"] { #expect(Self.fetch(harness, Self.request(origin.url(path))).0.data?.count == 3 << 20) }
        cache.flush()
        let bodies = directory.appendingPathComponent("bodies").path
        let files = try FileManager.default.contentsOfDirectory(atPath: bodies).sorted()
        #expect(files.count == 2)
        /// Streams `path`'s body, reading slowly at first, so that playing it waits for the reader.
        func streamed(_ path: String) async throws -> Data {
            let (response, bytes) = try await harness.manager.bytes(for: Self.request(origin.url(path)))
            #expect(response.status.code == 200)
            var received = Data()
            for try await chunk in bytes {
                received.append(contentsOf: chunk)
                if received.count < 256 << 10 { try await Task.sleep(nanoseconds: 1_000_000) }
            }
            return received
        }
        // Fresh: played from the file, chunk by chunk.
        #expect(try await streamed("/fresh") == Data(body.utf8))
        // No-cache: validated; after the 304 the stored body plays from its file, which stays as
        // it is (only its row takes the 304's fields).
        let (validated, outcome) = Self.fetch(harness, Self.request(origin.url("/validate")))
        #expect(outcome == .revalidated)
        #expect(validated.text == body)
        #expect(validated.response?.headerFields[HTTPField.Name("X-Checked")!] == "yes")
        cache.flush()
        #expect(try FileManager.default.contentsOfDirectory(atPath: bodies).sorted() == files)
        let stored = try #require(cache.cachedResponse(for: Self.request(origin.url("/validate"))))
        #expect(stored.response.headerFields[HTTPField.Name("X-Checked")!] == "yes")
        // Validated again, to a slow reader: the body waits for it.
        #expect(try await streamed("/validate") == Data(body.utf8))
        #expect(origin.requests.count == 4)
        origin.server.stop()
        harness.finish()
    }

    @Test func aCancelledLargeBodyLeavesNoFile() throws {
        let origin = try Origin { _ in
            // Head and 2 MiB, then the connection stalls: the task is cancelled mid-body.
            "HTTP/1.1 200 OK\r\nCache-Control: max-age=60\r\nContent-Length: 10000000\r\n\r\n" + String(repeating: "s", count: 2 << 20)
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("uvn-session-spool-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = try HTTPCache(memoryCapacity: 1 << 20, diskCapacity: 64 << 20, directory: directory)
        let harness = Self.harness(cache)
        let (task, wait) = harness.makeTask(Self.request(origin.url("/stalls")))
        task.resume()
        let deadline = Date().addingTimeInterval(10)
        while task.countOfBytesReceived < 2 << 20, Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        task.cancel()
        #expect(wait(10)?.code == .cancelled)
        cache.flush()
        Thread.sleep(forTimeInterval: 0.2)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("bodies").path).isEmpty)
        #expect(cache.currentDiskUsage == 0)
        origin.server.stop()
        harness.finish()
    }
}
