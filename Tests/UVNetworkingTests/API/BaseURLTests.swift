import Foundation
import Testing
@testable import UVNetworking

/// AFHTTPSessionManager's base-URL rules.
@Suite(.tags(.unit)) struct BaseURLTests {
    private let base = BaseURL.normalized(URL(string: "http://example.com/v1")!)

    @Test func nonEmptyPathGainsATrailingSlash() {
        #expect(base.absoluteString == "http://example.com/v1/")
        #expect(BaseURL.normalized(URL(string: "http://example.com/v1/")!).absoluteString == "http://example.com/v1/")
        #expect(BaseURL.normalized(URL(string: "http://example.com")!).absoluteString == "http://example.com")
    }

    /// Found by the url-resolution fuzz harness (Fuzz/regressions/url-resolution/
    /// base-query-ending-in-slash): a base whose query or fragment ended in "/" was taken for one
    /// whose path did, so "users" replaced the path's last segment.
    @Test func aQueryOrFragmentEndingInASlashDoesNotCountAsThePaths() {
        let withQuery = BaseURL.normalized(URL(string: "http://example.com/v1?next=/")!)
        #expect(withQuery.absoluteString == "http://example.com/v1/?next=/")
        #expect(BaseURL.resolve("users", against: withQuery)?.absoluteString == "http://example.com/v1/users")
        let withFragment = BaseURL.normalized(URL(string: "http://example.com/v1#/")!)
        #expect(BaseURL.resolve("users", against: withFragment)?.absoluteString == "http://example.com/v1/users")
    }

    @Test(arguments: [
        ("foo", "http://example.com/v1/foo"),
        ("/foo", "http://example.com/foo"),
        ("foo?bar=baz", "http://example.com/v1/foo?bar=baz"),
        ("foo/", "http://example.com/v1/foo/"),
        ("foo/bar/", "http://example.com/v1/foo/bar/"),
        ("../foo", "http://example.com/foo"),
        ("http://other.example.org/x?y=1", "http://other.example.org/x?y=1"),
        ("//other.example.org/p", "http://other.example.org/p"),
        ("", "http://example.com/v1/"),
    ])
    func resolvesByRFC3986(_ relative: String, _ expected: String) {
        #expect(BaseURL.resolve(relative, against: base)?.absoluteString == expected)
    }

    @Test func withoutABaseOnlyAbsoluteURLsWork() {
        #expect(BaseURL.resolve("http://example.com/a", against: nil)?.absoluteString == "http://example.com/a")
        #expect(BaseURL.resolve("http://example.com/a", against: nil)?.host == "example.com")
    }
}
