import Foundation
import HTTPTypes
import Testing
@testable import UVNetworking

/// The redirect rules without a server: Location resolution, method and body rules, header
/// stripping, limits, revisits and the https-to-http refusal.
@Suite(.tags(.unit)) struct RedirectPlannerTests {
    private let limits = RedirectPlanner.Limits(maximumRedirects: 3, allowsHTTPSToHTTP: false)

    private func request(_ url: String, _ method: HTTPRequest.Method = .get, body: String? = nil,
                         fields: [(String, String)] = []) -> Request {
        var request = Request(url: URL(string: url)!, method: method, body: body.map { Data($0.utf8) })
        for (name, value) in fields { request.addValue(value, forHTTPHeaderField: name) }
        return request
    }

    private func next(_ request: Request, _ status: Int, _ location: String?, visited: [String] = [],
                      limits: RedirectPlanner.Limits? = nil) -> Result<Request, NetworkingError> {
        let visits = ([request.url.absoluteString] + visited).map { RedirectPlanner.Visit(method: request.method, url: $0) }
        return RedirectPlanner.nextRequest(after: request, status: status, location: location, visited: visits,
                                           limits: limits ?? self.limits)
    }

    @Test func relativeLocationResolvesAgainstTheRequest() throws {
        let from = request("http://a.test/x/y?q=1")
        #expect(try next(from, 302, "z").get().url.absoluteString == "http://a.test/x/z")
        #expect(try next(from, 302, "/root").get().url.absoluteString == "http://a.test/root")
        #expect(try next(from, 302, "//b.test/p").get().url.absoluteString == "http://b.test/p")
        #expect(try next(from, 302, "https://c.test/").get().url.absoluteString == "https://c.test/")
    }

    @Test func fragmentIsInheritedWhenLocationHasNone() throws {
        let from = request("http://a.test/page#part")
        #expect(try next(from, 301, "/other").get().url.absoluteString == "http://a.test/other#part")
        #expect(try next(from, 301, "/other#own").get().url.absoluteString == "http://a.test/other#own")
    }

    @Test(arguments: [301, 302, 303, 307, 308])
    func postBecomesGetExceptFor307And308(status: Int) throws {
        let from = request("http://a.test/form", .post, body: "a=1",
                           fields: [("Content-Type", "application/x-www-form-urlencoded"), ("X-Keep", "1")])
        let to = try next(from, status, "/done").get()
        if status == 307 || status == 308 {
            #expect(to.method == .post)
            #expect(to.body == Data("a=1".utf8))
            #expect(to.value(forHTTPHeaderField: "Content-Type") != nil)
        } else {
            #expect(to.method == .get)
            #expect(to.body == nil)
            #expect(to.value(forHTTPHeaderField: "Content-Type") == nil)
        }
        #expect(to.value(forHTTPHeaderField: "X-Keep") == "1")
    }

    @Test func see303MakesEveryMethodButHeadAGet() throws {
        #expect(try next(request("http://a.test/", .put, body: "x"), 303, "/next").get().method == .get)
        #expect(try next(request("http://a.test/", .delete), 303, "/next").get().method == .get)
        #expect(try next(request("http://a.test/", .head), 303, "/next").get().method == .head)
        // 301/302 change only POST.
        #expect(try next(request("http://a.test/", .put, body: "x"), 302, "/next").get().method == .put)
    }

    @Test func credentialsAreStrippedAcrossOrigins() throws {
        let fields = [("Authorization", "Basic eDp5"), ("Cookie", "a=b"), ("Proxy-Authorization", "Basic eDp5"), ("X-Other", "1")]
        let from = request("http://a.test/", fields: fields)
        let same = try next(from, 302, "/elsewhere").get()
        #expect(same.value(forHTTPHeaderField: "Authorization") != nil)
        #expect(same.value(forHTTPHeaderField: "Cookie") != nil)
        for target in ["http://b.test/", "https://a.test/", "http://a.test:8080/"] {
            let other = try next(from, 302, target).get()
            #expect(other.value(forHTTPHeaderField: "Authorization") == nil, "\(target)")
            #expect(other.value(forHTTPHeaderField: "Cookie") == nil)
            #expect(other.value(forHTTPHeaderField: "Proxy-Authorization") == nil)
            #expect(other.value(forHTTPHeaderField: "X-Other") == "1")
        }
        // Default ports are the same origin.
        #expect(RedirectPlanner.isSameOrigin(URL(string: "http://A.test/")!, URL(string: "http://a.test:80/x")!))
    }

    @Test func httpsToHTTPIsRefusedUnlessAllowed() throws {
        let from = request("https://a.test/")
        #expect(throws: NetworkingError.self) { try next(from, 302, "http://a.test/").get() }
        if case .failure(let error) = next(from, 302, "http://a.test/") { #expect(error.code == .insecureRedirect) }
        let allowed = RedirectPlanner.Limits(maximumRedirects: 3, allowsHTTPSToHTTP: true)
        #expect(try next(from, 302, "http://a.test/", limits: allowed).get().url.scheme == "http")
        #expect(try next(request("http://a.test/"), 302, "https://a.test/").get().url.scheme == "https")
    }

    @Test func limitAndBadLocationsFail() {
        func code(_ result: Result<Request, NetworkingError>) -> NetworkingError.Code? {
            if case .failure(let error) = result { return error.code }
            return nil
        }
        let from = request("http://a.test/4")
        #expect(code(next(from, 302, "/5", visited: ["http://a.test/1", "http://a.test/2", "http://a.test/3"])) == .tooManyRedirects)
        #expect(code(next(from, 302, "/5", visited: ["http://a.test/2", "http://a.test/3"])) == nil)
        #expect(code(next(from, 302, nil)) == .malformedResponse)
        #expect(code(next(from, 302, "ftp://a.test/file")) == .unsupportedURL)
        #expect(code(next(from, 302, "http://")) == .invalidURL)
    }

    /// A refused Location's credentials stay out of the error: its text reaches the "task failed"
    /// log line and the task's span (`recordError`), which must never carry a URL's password.
    @Test(arguments: [
        ("https://a.test/", "http://alice:s3cret@b.test/x", NetworkingError.Code.insecureRedirect),
        ("http://a.test/", "ftp://alice:s3cret@b.test/file", .unsupportedURL),
        ("http://a.test/", "http://alice:s3cret@b test/", .invalidURL),
    ])
    func refusedLocationsLeaveTheirCredentialsOut(from: String, location: String, expected: NetworkingError.Code) {
        guard case .failure(let error) = next(request(from), 302, location) else {
            Issue.record("\(location) was followed")
            return
        }
        #expect(error.code == expected)
        #expect(!error.description.contains("s3cret"), "\(error)")
        #expect(!error.description.contains("alice"), "\(error)")
        #expect(error.description.contains("b.test") || expected == .invalidURL, "\(error)")
    }

    /// Servers set a cookie and redirect to the same URL, or bounce between two: a URL already
    /// visited is requested again, as curl and browsers do; only the limit ends a loop.
    @Test func revisitingAURLIsFollowedUntilTheLimit() throws {
        let from = request("http://a.test/1")
        #expect(try next(from, 302, "/1").get().url.absoluteString == "http://a.test/1")
        #expect(try next(from, 302, "http://a.test/1", visited: ["http://a.test/1", "http://a.test/2"]).get().url.path == "/1")
        let atLimit = next(from, 302, "/1", visited: ["http://a.test/1", "http://a.test/1", "http://a.test/1"])
        guard case .failure(let error) = atLimit else { Issue.record("followed past the limit"); return }
        #expect(error.code == .tooManyRedirects)
    }

    /// A Location that is empty or blank names no target: the response is not a redirect to
    /// follow, like a 3xx without Location (RFC 9110 §15.4: the field is a SHOULD).
    @Test(arguments: [nil, "", " ", "\t \t"])
    func blankLocationIsNotFollowed(location: String?) {
        #expect(!RedirectPlanner.isRedirectToFollow(status: 302, location: location))
    }

    @Test func redirectStatusesWithATargetAreFollowed() {
        for status in [301, 302, 303, 307, 308] {
            #expect(RedirectPlanner.isRedirectToFollow(status: status, location: "/next"))
        }
        for status in [200, 300, 304, 305, 306, 399] {
            #expect(!RedirectPlanner.isRedirectToFollow(status: status, location: "/next"))
        }
    }
}
