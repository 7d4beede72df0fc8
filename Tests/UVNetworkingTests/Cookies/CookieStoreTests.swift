import Foundation
import HTTPTypes
import Testing
@testable import UVNetworking

/// RFC 6265 §5.3 (which cookies are kept, and how) and §5.4 (which are sent, in what order),
/// with RFC 6265bis's rules for Secure cookies and name prefixes.
@Suite(.tags(.loopback)) struct CookieStoreTests {
    let clock = TestClock()

    // MARK: Domains

    @Test func withoutDomainACookieIsHostOnly() throws {
        let store = clock.store()
        store.set("a=1", from: "http://Example.com/")
        let cookie = try #require(store.allCookies.first)
        #expect(cookie.domain == "example.com")
        #expect(cookie.isHostOnly)
        #expect(store.header("http://example.com/") == "a=1")
        #expect(store.header("http://EXAMPLE.COM:8080/x") == "a=1")
        #expect(store.header("http://www.example.com/") == nil)
    }

    @Test func aDomainCookieReachesTheDomainAndItsSubdomains() throws {
        let store = clock.store()
        store.set("a=1; Domain=.example.com", from: "http://www.example.com/")
        let cookie = try #require(store.allCookies.first)
        #expect(cookie.domain == "example.com")
        #expect(!cookie.isHostOnly)
        #expect(store.header("http://example.com/") == "a=1")
        #expect(store.header("http://www.example.com/") == "a=1")
        #expect(store.header("http://a.b.example.com/") == "a=1")
        #expect(store.header("http://notexample.com/") == nil)
        #expect(store.header("http://example.org/") == nil)
    }

    @Test func aDomainMustCoverTheRequestHost() {
        let store = clock.store()
        store.set("a=1; Domain=other.com", "b=1; Domain=www.example.com", "c=1; Domain=ample.com", from: "http://example.com/")
        #expect(store.allCookies.isEmpty)
    }

    @Test func aDomainWithoutADotIsTakenForAPublicSuffix() throws {
        let store = clock.store()
        store.set("a=1; Domain=com", from: "http://example.com/")
        #expect(store.allCookies.isEmpty)
        // Unless it is the host itself: then the cookie is host-only.
        store.set("b=1; Domain=LOCALHOST", from: "http://localhost/")
        let cookie = try #require(store.allCookies.first)
        #expect(cookie.domain == "localhost" && cookie.isHostOnly)
        #expect(store.header("http://localhost/") == "b=1")
    }

    @Test func anIPHostGetsHostOnlyCookiesAndNoOtherDomain() throws {
        let store = clock.store()
        store.set("a=1", "b=1; Domain=127.0.0.1", "c=1; Domain=0.0.1", "d=1; Domain=.0.0.1", from: "http://127.0.0.1:8080/")
        #expect(store.allCookies.map(\.name) == ["a", "b"])
        #expect(store.allCookies.allSatisfy { $0.isHostOnly && $0.domain == "127.0.0.1" })
        #expect(store.header("http://127.0.0.1/") == "a=1; b=1")
        #expect(store.header("http://10.0.0.1/") == nil)
        store.set("v6=1", from: "http://[::1]:8080/")
        #expect(store.header("http://[::1]/") == "v6=1")
    }

    // MARK: Paths

    @Test func withoutPathTheDefaultPathIsTheRequestDirectory() throws {
        let store = clock.store()
        store.set("a=1", from: "http://example.com/shop/cart/items?next=/x/y")
        #expect(store.allCookies.first?.path == "/shop/cart")
        #expect(store.header("http://example.com/shop/cart") == "a=1")
        #expect(store.header("http://example.com/shop/cart/") == "a=1")
        #expect(store.header("http://example.com/shop/cart/x") == "a=1")
        #expect(store.header("http://example.com/shop") == nil)
        #expect(store.header("http://example.com/shop/cartoon") == nil)
    }

    @Test func anExplicitPathIsUsedAsGiven() {
        let store = clock.store()
        store.set("a=1; Path=/docs", "b=1; Path=docs", from: "http://example.com/x/y")
        #expect(store.allCookies.map(\.path) == ["/docs", "/x"])
    }

    // MARK: Secure

    @Test func secureCookiesAreSetAndSentOnlyOverHTTPS() {
        let store = clock.store()
        store.set("a=1; Secure", from: "http://example.com/")
        #expect(store.allCookies.isEmpty)
        store.set("a=1; Secure", from: "https://example.com/")
        #expect(store.allCookies.first?.isSecure == true)
        #expect(store.header("https://example.com/") == "a=1")
        #expect(store.header("http://example.com/") == nil)
    }

    @Test func plainHTTPLeavesSecureCookiesAlone() {
        let store = clock.store()
        store.set("sid=secret; Secure; Domain=example.com", from: "https://www.example.com/")
        // Neither replaced, nor shadowed from a subdomain or a sub-path, nor deleted.
        store.set("sid=forged", from: "http://www.example.com/")
        store.set("sid=forged; Domain=example.com; Path=/account", from: "http://api.example.com/")
        store.set("sid=; Max-Age=0; Domain=example.com", from: "http://example.com/")
        #expect(store.allCookies.map(\.value) == ["secret"])
        // Another name, or another site, is not affected.
        store.set("theme=dark", from: "http://www.example.com/")
        store.set("sid=other", from: "http://example.org/")
        #expect(store.allCookies.count == 3)
        // Over https the cookie can be replaced by a non-secure one.
        store.set("sid=new; Domain=example.com", from: "https://www.example.com/")
        #expect(store.header("http://example.com/") == "sid=new")
    }

    @Test func namePrefixesDemandWhatTheyPromise() {
        let store = clock.store()
        store.set("__Secure-a=1", "__secure-b=1; Secure", "__Host-c=1; Secure; Path=/", "__Host-d=1; Secure",
                  "__host-e=1; Secure; Path=/; Domain=example.com", "__Host-f=1; Path=/", from: "https://example.com/x/y")
        #expect(store.allCookies.map(\.name) == ["__secure-b", "__Host-c"])
    }

    // MARK: Expiry

    @Test func cookiesExpireWithTheClock() {
        let store = clock.store()
        store.set("short=1; Max-Age=60", "dated=1; Expires=Wed, 09 Jun 2100 10:18:14 GMT", "session=1", from: "http://example.com/")
        #expect(store.header("http://example.com/") == "short=1; dated=1; session=1")
        #expect(store.allCookies.first { $0.name == "session" }?.isSessionOnly == true)
        clock.advance(60)
        #expect(store.header("http://example.com/") == "dated=1; session=1")
        #expect(store.allCookies.map(\.name) == ["dated", "session"])
        clock.advance(3_000_000_000)
        #expect(store.header("http://example.com/") == "session=1")
    }

    @Test func anExpiredSetCookieDeletesTheCookie() {
        let store = clock.store()
        store.set("a=1", "b=1", "c=1; Path=/x", from: "http://example.com/")
        store.set("a=; Expires=Thu, 01 Jan 1970 00:00:00 GMT", "b=gone; Max-Age=0", from: "http://example.com/")
        #expect(store.allCookies.map(\.name) == ["c"])
        // Deletion matches name, domain and path: another path is another cookie.
        store.set("c=; Max-Age=0", from: "http://example.com/")
        #expect(store.allCookies.map(\.name) == ["c"])
        store.set("c=; Max-Age=0; Path=/x", from: "http://example.com/")
        #expect(store.allCookies.isEmpty)
    }

    @Test func anExpiredCookieIsNotStored() {
        let store = clock.store()
        store.set("a=1; Expires=Thu, 01 Jan 2015 00:00:00 GMT", from: "http://example.com/")
        #expect(store.allCookies.isEmpty)
    }

    // MARK: Replacement and order

    @Test func replacingACookieKeepsItsCreationTime() throws {
        let store = clock.store()
        let created = clock.now
        store.set("a=1; Max-Age=100", from: "http://example.com/")
        clock.advance(10)
        store.set("a=2; HttpOnly", from: "http://example.com/")
        let cookie = try #require(store.allCookies.first)
        #expect(store.allCookies.count == 1)
        #expect(cookie.value == "2" && cookie.isHTTPOnly && cookie.isSessionOnly)
        #expect(cookie.creationTime == created)
    }

    @Test func longerPathsGoFirstThenOlderCookies() {
        let store = clock.store()
        store.set("b=1; Path=/", from: "http://example.com/")
        clock.advance(1)
        store.set("a=1; Path=/", from: "http://example.com/")
        clock.advance(1)
        store.set("deep=1; Path=/x/y", "mid=1; Path=/x", from: "http://example.com/")
        #expect(store.header("http://example.com/x/y/z") == "deep=1; mid=1; b=1; a=1")
        // A replaced cookie keeps its place.
        clock.advance(1)
        store.set("b=2; Path=/", from: "http://example.com/")
        #expect(store.header("http://example.com/") == "b=2; a=1")
        // Cookies created together keep the order of their lines.
        store.set("z=1; Path=/q", "y=1; Path=/q", from: "http://example.com/")
        #expect(store.header("http://example.com/q") == "z=1; y=1; b=2; a=1")
    }

    @Test func cookiesForAURLMatchTheHeader() {
        let store = clock.store()
        store.set("a=1", "b=2; Path=/p", from: "http://example.com/")
        #expect(store.cookies(for: URL(string: "http://example.com/p")!).map(\.description) == ["b=2", "a=1"])
        #expect(store.cookies(for: URL(string: "ftp://example.com/p")!).isEmpty)
        #expect(store.header("mailto:someone@example.com") == nil)
    }

    // MARK: Removing

    @Test func deleteRemoveAllAndRemoveSince() throws {
        let store = clock.store()
        store.set("a=1", "b=1", from: "http://example.com/")
        let start = clock.now
        clock.advance(5)
        store.set("c=1", from: "http://example.com/")
        // Replacing keeps a's creation time, so "since" does not see it as new.
        store.set("a=2", from: "http://example.com/")
        store.removeCookies(since: start.addingTimeInterval(1))
        #expect(store.allCookies.map(\.name) == ["a", "b"])
        let b = try #require(store.allCookies.last)
        store.deleteCookie(b)
        #expect(store.allCookies.map(\.name) == ["a"])
        store.removeAll()
        #expect(store.allCookies.isEmpty)
        #expect(store.header("http://example.com/") == nil)
    }

    @Test func setCookieLinesOfAResponseAreStoredFromItsFields() {
        let store = clock.store()
        var fields = HTTPFields()
        fields.append(HTTPField(name: .setCookie, value: "a=1"))
        fields.append(HTTPField(name: .contentType, value: "text/plain"))
        fields.append(HTTPField(name: .setCookie, value: "b=2, c=3"))
        store.storeCookies(from: HTTPResponse(status: .ok, headerFields: fields), for: URL(string: "http://example.com/")!)
        // Each field is one line: a comma does not split it.
        #expect(store.header("http://example.com/") == "a=1; b=2, c=3")
    }
}
