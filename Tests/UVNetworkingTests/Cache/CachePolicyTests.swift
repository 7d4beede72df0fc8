import Foundation
import HTTPTypes
import Testing
@testable import UVNetworking

/// The RFC 9111 rules of the cache's pure core: Cache-Control's parsing, freshness and age,
/// reuse under request directives, storability, 304 updates, invalidation and Vary.
@Suite(.tags(.unit)) struct CachePolicyTests {
    private static let received = Date(timeIntervalSince1970: 1_800_000_000)

    private func fields(_ pairs: [(String, String)]) -> HTTPFields {
        var result = HTTPFields()
        for (name, value) in pairs { result.append(HTTPField(name: HTTPField.Name(name)!, value: value)) }
        return result
    }

    private func date(_ offset: TimeInterval) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: Self.received.addingTimeInterval(offset))
    }

    private func freshness(_ pairs: [(String, String)], status: Int = 200, delay: TimeInterval = 0) -> CacheFreshness {
        let all = fields(pairs)
        return CacheFreshness(status: status, fields: all, control: CacheControl(all),
                              requestTime: Self.received.addingTimeInterval(-delay), responseTime: Self.received)
    }

    @Test func cacheControlIsParsedAsOneListFirstOccurrenceWinning() {
        let control = CacheControl(fields([("Cache-Control", "Max-Age=60, no-cache"), ("Cache-Control", "max-age=5, private=\"set-cookie, x\"")]))
        #expect(control.maxAge == 60 && control.noCache && control.isPrivate && !control.noStore)
        #expect(CacheControl(fields([("Cache-Control", "max-age=\"30\"")])).maxAge == 30)
        let invalid = CacheControl(fields([("Cache-Control", "max-age=-1")]))
        #expect(invalid.maxAge == nil && invalid.invalidMaxAge)
        #expect(CacheControl(fields([("Cache-Control", "max-age=99999999999999999")])).maxAge == CacheControl.deltaSecondsCeiling)
        let request = CacheControl(fields([("Cache-Control", "max-stale, min-fresh=20, only-if-cached")]), isRequest: true)
        #expect(request.maxStale == .some(nil) && request.minFresh == 20 && request.onlyIfCached)
        #expect(CacheControl(fields([("Pragma", "no-cache")]), isRequest: true).noCache)
        #expect(!CacheControl(fields([("Pragma", "no-cache")])).noCache)
        #expect(!CacheControl(fields([("Pragma", "no-cache"), ("Cache-Control", "max-age=5")]), isRequest: true).noCache)
    }

    @Test func lifetimeComesFromMaxAgeThenExpiresThenTheHeuristic() {
        #expect(freshness([("Cache-Control", "max-age=3600"), ("Expires", date(-10_000)), ("Date", date(0))]).lifetime == 3600)
        #expect(freshness([("Expires", date(600)), ("Date", date(0))]).lifetime == 600)
        // Expires counts from Date, not from when it arrived.
        #expect(freshness([("Expires", date(600)), ("Date", date(-100))]).lifetime == 700)
        #expect(freshness([("Expires", "0")]).lifetime == 0)
        #expect(freshness([("Cache-Control", "max-age=oops"), ("Expires", date(600))]).lifetime == 0)
        // 10% of the time since Last-Modified, for statuses that allow it, or with public.
        let heuristic = freshness([("Last-Modified", date(-3000)), ("Date", date(0))])
        #expect(heuristic.lifetime == 300 && heuristic.isHeuristic)
        #expect(freshness([("Last-Modified", date(-3000))], status: 201).lifetime == 0)
        #expect(freshness([("Last-Modified", date(-3000)), ("Cache-Control", "public")], status: 299).lifetime == 300)
        #expect(freshness([("Cache-Control", "max-age=1, s-maxage=3600")]).lifetime == 1)
    }

    @Test func ageCountsTheAgeFieldTheTripAndTheTimeStored() {
        let aged = freshness([("Cache-Control", "max-age=3600"), ("Age", "12000")])
        #expect(aged.initialAge == 12_000 && !aged.isFresh(at: Self.received))
        // The request's round trip is added to Age (corrected_age_value).
        #expect(freshness([("Age", "10")], delay: 2).initialAge == 12)
        // A Date in the past makes an apparent age.
        #expect(freshness([("Date", date(-50)), ("Age", "10")]).initialAge == 50)
        let fresh = freshness([("Cache-Control", "max-age=100")])
        #expect(fresh.age(at: Self.received.addingTimeInterval(30)) == 30)
        #expect(fresh.isFresh(at: Self.received.addingTimeInterval(99)))
        #expect(!fresh.isFresh(at: Self.received.addingTimeInterval(100)))
        #expect(!freshness([("Expires", date(0)), ("Date", date(0))]).isFresh(at: Self.received))
    }

    private func reuse(_ response: [(String, String)], request: String? = nil, after seconds: TimeInterval = 0) -> CacheReuse {
        let stored = fields(response)
        let asked = CacheControl(fields(request.map { [("Cache-Control", $0)] } ?? []), isRequest: true)
        return CacheReuse.decide(freshness(response), response: CacheControl(stored), request: asked,
                                 now: Self.received.addingTimeInterval(seconds))
    }

    /// A HEAD is looked up under its URL's stored GET response: served while that may be,
    /// else sent to the origin as it is (never validated, never stored).
    @Test func aHEADIsPlannedAgainstTheStoredGET() {
        func entry(_ cacheControl: String) -> CacheEntry {
            CacheEntry(key: "k", status: 200, reason: "OK", fields: fields([("Cache-Control", cacheControl), ("ETag", "\"v1\"")]),
                       body: Data("body".utf8), requestTime: Self.received, responseTime: Self.received, varyNames: [], varyValues: [:])
        }
        func plan(_ stored: CacheEntry?, _ policy: Request.CachePolicy = .useProtocolCachePolicy,
                  request: [(String, String)] = []) -> CachePlan {
            let requestFields = fields(request)
            return CachePlan.make(method: .head, fields: requestFields, policy: policy, control: CacheControl(requestFields),
                                  stored: stored, now: Self.received.addingTimeInterval(10))
        }
        let fresh = entry("max-age=60")
        let stale = entry("max-age=1")
        #expect(plan(fresh) == .serve(fresh))
        #expect(plan(stale) == .fetch(store: false, lookedUp: true))
        #expect(plan(stale, .reloadRevalidatingCacheData) == .fetch(store: false, lookedUp: true))
        #expect(plan(stale, .returnCacheDataElseLoad) == .serve(stale))
        #expect(plan(nil) == .fetch(store: false, lookedUp: true))
        #expect(plan(nil, request: [("Cache-Control", "only-if-cached")]) == .gatewayTimeout)
        #expect(plan(stale, request: [("Cache-Control", "only-if-cached")]) == .gatewayTimeout)
        #expect(plan(nil, .returnCacheDataDontLoad) == .unavailable)
        #expect(plan(fresh, .reloadIgnoringLocalCacheData) == .fetch(store: false, lookedUp: false))
        #expect(CachePlan.looksUp(method: .head, fields: HTTPFields(), policy: .useProtocolCachePolicy, control: CacheControl()))
    }

    @Test func requestDirectivesDecideReuse() {
        #expect(reuse([("Cache-Control", "max-age=1500")]) == .fresh)
        #expect(reuse([("Cache-Control", "max-age=1500, no-cache")]) == .validate)
        #expect(reuse([("Cache-Control", "max-age=1500")], request: "no-cache") == .validate)
        #expect(reuse([("Cache-Control", "max-age=1500")], request: "max-age=0") == .validate)
        #expect(reuse([("Cache-Control", "max-age=3600"), ("Age", "1800")], request: "max-age=600") == .validate)
        #expect(reuse([("Cache-Control", "max-age=3600")], request: "max-age=600", after: 10) == .fresh)
        #expect(reuse([("Cache-Control", "max-age=1500")], request: "min-fresh=2000") == .validate)
        #expect(reuse([("Cache-Control", "max-age=1500")], request: "min-fresh=1000", after: 501) == .validate)
        #expect(reuse([("Cache-Control", "max-age=1500")], request: "min-fresh=1000", after: 500) == .fresh)
        // Stale: only max-stale serves it, within its bound, never past must-revalidate.
        #expect(reuse([("Cache-Control", "max-age=1")], after: 3) == .validate)
        #expect(reuse([("Cache-Control", "max-age=1")], request: "max-stale=1000", after: 3) == .staleAccepted)
        #expect(reuse([("Cache-Control", "max-age=1")], request: "max-stale", after: 100_000) == .staleAccepted)
        #expect(reuse([("Cache-Control", "max-age=1")], request: "max-stale=10", after: 30) == .validate)
        #expect(reuse([("Cache-Control", "max-age=1, must-revalidate")], request: "max-stale=1000", after: 3) == .validate)
        // Stale when it arrived (Age past max-age): never served stale.
        #expect(reuse([("Cache-Control", "max-age=1500"), ("Age", "2000")], request: "max-stale=1000") == .validate)
    }

    @Test func conditionalFieldsCarryTheStoredValidators() {
        let both = CacheReuse.conditionalFields(for: fields([("ETag", "\"v1\""), ("Last-Modified", date(-10))]))
        #expect(both.map(\.name) == ["If-None-Match", "If-Modified-Since"])
        #expect(both.first?.value == "\"v1\"")
        #expect(CacheReuse.conditionalFields(for: fields([("Content-Type", "text/plain")])).isEmpty)
    }

    @Test func whatAPrivateCacheStores() {
        func mayStore(_ pairs: [(String, String)], status: Int = 200, method: HTTPRequest.Method = .get, request: String? = nil) -> Bool {
            let all = fields(pairs)
            return CacheStorePolicy.mayStore(method: method, status: status, fields: all, response: CacheControl(all),
                                             request: CacheControl(fields(request.map { [("Cache-Control", $0)] } ?? []), isRequest: true))
        }
        #expect(mayStore([]))
        #expect(mayStore([], status: 404))
        #expect(!mayStore([], status: 201))
        #expect(mayStore([("Cache-Control", "max-age=60")], status: 201))
        #expect(mayStore([("Cache-Control", "private")], status: 202))
        #expect(mayStore([("Expires", "0")], status: 503))
        #expect(!mayStore([("Cache-Control", "max-age=60, no-store")]))
        #expect(!mayStore([("Cache-Control", "max-age=60")], request: "no-store"))
        #expect(!mayStore([("Cache-Control", "max-age=60")], method: .post))
        #expect(!mayStore([("Cache-Control", "max-age=60")], status: 206))
        #expect(!mayStore([("Cache-Control", "max-age=60"), ("Vary", "Accept, *")]))
        // no-cache is stored, and revalidated on use.
        #expect(mayStore([("Cache-Control", "no-cache"), ("ETag", "\"a\"")]))
    }

    @Test func a304ReplacesTheFieldsItCarriesButNotTheConnectionsOrTheLength() {
        let stored = fields([("Content-Type", "text/plain"), ("Content-Length", "5"), ("ETag", "\"a\""), ("X-Old", "1"), ("X-Old", "2")])
        let update = fields([("ETag", "\"b\""), ("X-Old", "3"), ("Content-Length", "0"), ("Connection", "close, X-Hop"),
                             ("X-Hop", "x"), ("Cache-Control", "max-age=60")])
        let merged = CacheStorePolicy.fields(stored, updatedBy: update)
        #expect(merged[.eTag] == "\"b\"")
        #expect(merged[values: HTTPField.Name("X-Old")!] == ["3"])
        #expect(merged[.contentLength] == "5")
        #expect(merged[.contentType] == "text/plain")
        #expect(merged[.cacheControl] == "max-age=60")
        #expect(merged[HTTPField.Name("X-Hop")!] == nil && merged[.connection] == nil)
    }

    @Test func aHEADConfirmsAStoredGETOnlyWithTheSameValidatorsAndLength() {
        let stored = fields([("ETag", "\"a\""), ("Last-Modified", "Tue, 01 Dec 2026 10:00:00 GMT"), ("Content-Length", "5")])
        func confirms(_ head: [(String, String)], _ against: HTTPFields = stored) -> Bool {
            CacheStorePolicy.headConfirms(fields(head), stored: against)
        }
        #expect(confirms([("ETag", "\"a\""), ("Content-Length", "5")]))
        #expect(confirms([("Last-Modified", "Tue, 01 Dec 2026 10:00:00 GMT")]))
        // No validator and no length: nothing contradicts it.
        #expect(confirms([("Cache-Control", "max-age=60")]))
        #expect(!confirms([("ETag", "\"b\""), ("Content-Length", "5")]))
        #expect(!confirms([("ETag", "\"a\""), ("Last-Modified", "Wed, 02 Dec 2026 10:00:00 GMT")]))
        #expect(!confirms([("ETag", "\"a\""), ("Content-Length", "6")]))
        #expect(!confirms([("ETag", "\"a\"")], fields([("Content-Length", "5")])))
        // A body stored decoded: the HEAD's length is the coded one's, not compared.
        #expect(confirms([("ETag", "\"a\""), ("Content-Encoding", "gzip"), ("Content-Length", "3")]))
        #expect(!confirms([("Content-Length", "3")]))
    }

    @Test func unsafeMethodsInvalidateTheTargetAndSameOriginLocations() {
        let target = URL(string: "http://example.com/a?x=1")!
        let located = fields([("Location", "/b"), ("Content-Location", "http://other.example/c")])
        let urls = CacheStorePolicy.invalidatedURLs(method: .post, status: 201, target: target, fields: located)
        #expect(urls.map(\.absoluteString) == ["http://example.com/a?x=1", "http://example.com/b"])
        #expect(CacheStorePolicy.invalidatedURLs(method: .get, status: 200, target: target, fields: located).isEmpty)
        #expect(CacheStorePolicy.invalidatedURLs(method: .delete, status: 500, target: target, fields: located).isEmpty)
        #expect(CacheKey.key(for: URL(string: "HTTP://Example.COM/a#frag")!) == "http://example.com/a")
        // URLs taken as their own key are exactly what the long way makes of them.
        let keyed = ["http://example.com/a", "http://example.com", "http://example.com/", "https://example.com:8443/a/b?c=d&e",
                    "http://example.com/?", "http://example.com/%7Efoo/%20bar", "http://127.0.0.1:8080/x", "http://[::1]:8080/x",
                    "http://user:pw@example.com/", "http://Example.com/", "HTTP://example.com/", "http://example.com/a#b",
                    "http://example.com/a?q=1#", "http://xn--bcher-kva.example/", "ftp://example.com/file", "http://ex_ample.com/",
                    "http://example.com/a;p?q", "http://example.com:/a", "http://example.com:080/a", "http://example.com:80/a",
                    "https://example.com:443", "http://example.com:8080?q"]
        for text in keyed {
            let url = URL(string: text)!
            #expect(CacheKey.key(for: url) == CacheKey.normalizedKey(for: url), "\(text)")
        }
        #expect(CacheKey.isKeyAsItIs("http://example.com/a?b"))
        #expect(!CacheKey.isKeyAsItIs("http://Example.com/a"))
        #expect(!CacheKey.isKeyAsItIs("http://example.com/a#f"))
        #expect(!CacheKey.isKeyAsItIs("http://[::1]/"))
        #expect(CacheKey.isKeyAsItIs("http://127.0.0.1:8080/x"))
        #expect(!CacheKey.isKeyAsItIs("http://example.com:/a"))
        #expect(CacheKey.sameOrigin(URL(string: "https://a.example/x")!, URL(string: "https://a.example:443/y")!))
    }

    @Test func varySelectsByTheNamedRequestFields() {
        let names = CacheVary.names(in: fields([("Vary", "Accept-Encoding, X-Lang"), ("Vary", "accept")]))
        #expect(names == ["accept-encoding", "x-lang", "accept"])
        let stored = CacheVary.selected(names, from: fields([("Accept-Encoding", "gzip ,  br"), ("Accept", "a")]))
        #expect(CacheVary.matches(storedNames: names, storedValues: stored,
                                  request: fields([("Accept-Encoding", "gzip,br"), ("Accept", "a")])))
        #expect(!CacheVary.matches(storedNames: names, storedValues: stored,
                                   request: fields([("Accept-Encoding", "gzip,br"), ("Accept", "a"), ("X-Lang", "fr")])))
        #expect(!CacheVary.matches(storedNames: names, storedValues: stored, request: fields([("Accept-Encoding", "br")])))
        #expect(!CacheVary.matches(storedNames: ["*"], storedValues: [:], request: HTTPFields()))
    }
}
