import Testing
@testable import UVNetworking

@Suite(.tags(.unit)) struct RequestTargetTests {
    @Test func partsOfAnOrdinaryURL() throws {
        let target = try RequestTarget(absoluteURL: "http://user:pw@example.com:8080/p%20q?x=1#frag")
        #expect(target.host == "example.com")
        #expect(target.port == 8080)
        #expect(target.authority == "example.com:8080")
        #expect(target.path == "/p%20q?x=1")
    }

    @Test func defaultPortIsLeftOutOfHostAndEmptyPathIsSlash() throws {
        let target = try RequestTarget(absoluteURL: "http://example.com")
        #expect(target.port == 80)
        #expect(target.authority == "example.com")
        #expect(target.path == "/")
        #expect(try RequestTarget(absoluteURL: "http://example.com?q").path == "/?q")
    }

    @Test func ipv6Literal() throws {
        let target = try RequestTarget(absoluteURL: "http://[::1]:9000/x")
        #expect(target.host == "::1")
        #expect(target.port == 9000)
        #expect(target.authority == "[::1]:9000")
    }

    @Test func authorityIsCanonicalWhateverThePortLooksLike() throws {
        #expect(try RequestTarget(absoluteURL: "http://h:08080/").authority == "h:8080")
        #expect(try RequestTarget(absoluteURL: "http://h:80/").authority == "h")
        #expect(try RequestTarget(absoluteURL: "http://h:/").authority == "h")
        #expect(try RequestTarget(absoluteURL: "https://h:443/").authority == "h")
        #expect(try RequestTarget(absoluteURL: "https://u@H.example:8443/").authority == "H.example:8443")
        #expect(try RequestTarget(absoluteURL: "http://[::1]/").authority == "[::1]")
        #expect(try RequestTarget(absoluteURL: "http://[::1]:080/").authority == "[::1]")
        #expect(try RequestTarget(absoluteURL: "http://[::1]:09000/").authority == "[::1]:9000")
        #expect(try RequestTarget(absoluteURL: "http://[1.2.3.4]:81/").authority == "1.2.3.4:81")
    }

    @Test(arguments: ["http://", "http://:80/", "http://h:0/", "http://h:70000/", "http://h:8a/", "http://[::1/", "notaurl", "http://h h/", "http://h/a b"])
    func invalidURLs(url: String) {
        #expect(throws: RequestTarget.ParseError.self) { _ = try RequestTarget(absoluteURL: url) }
    }

    @Test func otherSchemesAreUnsupported() {
        #expect(throws: RequestTarget.ParseError.unsupportedScheme("ftp")) { _ = try RequestTarget(absoluteURL: "ftp://h/") }
    }
}
