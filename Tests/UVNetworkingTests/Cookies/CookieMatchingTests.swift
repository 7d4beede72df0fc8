import Foundation
import Testing
@testable import UVNetworking

/// RFC 6265 §5.1.3 domain-match and §5.1.4 default-path and path-match.
@Suite(.tags(.unit)) struct CookieMatchingTests {
    @Test(arguments: [
        ("example.com", "example.com", true),
        ("www.example.com", "example.com", true),
        ("a.b.example.com", "example.com", true),
        ("wwwexample.com", "example.com", false),
        ("example.com", "www.example.com", false),
        ("example.com.evil", "example.com", false),
        // IP addresses match only themselves.
        ("1.2.3.4", "1.2.3.4", true),
        ("1.2.3.4", "2.3.4", false),
        ("1.2.3.4", "3.4", false),
        ("::1", "::1", true),
        ("fe80::1", "1", false),
    ])
    func domainMatch(_ host: String, _ domain: String, _ matches: Bool) {
        #expect(CookieMatching.domainMatches(host, domain) == matches)
    }

    @Test(arguments: [
        ("", "/"), ("/", "/"), ("/a", "/"), ("/a/", "/a"), ("/a/b", "/a"), ("/a/b/", "/a/b"), ("a/b", "/"), ("//", "/"),
    ])
    func defaultPath(_ requestPath: String, _ expected: String) {
        #expect(CookieMatching.defaultPath(requestPath) == expected)
    }

    @Test(arguments: [
        ("/", "/", true),
        ("/anything/at/all", "/", true),
        ("/docs", "/docs", true),
        ("/docs/", "/docs", true),
        ("/docs/web", "/docs", true),
        ("/docs/web", "/docs/", true),
        ("/docsets", "/docs", false),
        ("/doc", "/docs", false),
        ("/Docs/web", "/docs", false),
        ("/", "/docs", false),
    ])
    func pathMatch(_ requestPath: String, _ cookiePath: String, _ matches: Bool) {
        #expect(CookieMatching.pathMatches(requestPath, cookiePath) == matches)
    }

    @Test func aRequestURLGivesTheCanonicalHostThePathWithoutQueryAndTheScheme() throws {
        let url = try #require(CookieRequestURL(URL(string: "HTTPS://User@WWW.Example.COM:8443/a/b?c=/d/e#f")!))
        #expect(url.host == "www.example.com")
        #expect(url.path == "/a/b")
        #expect(url.isSecure)
        let bare = try #require(CookieRequestURL(URL(string: "http://example.com?q=1")!))
        #expect(bare.path == "/")
        #expect(!bare.isSecure)
        #expect(CookieRequestURL(URL(string: "ftp://example.com/")!) == nil)
    }
}
