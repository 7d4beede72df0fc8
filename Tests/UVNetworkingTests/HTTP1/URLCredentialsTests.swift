import Foundation
import Testing
@testable import UVNetworking

/// A URL's userinfo (`http://user:password@host/`) becomes `Authorization: Basic`, as in curl,
/// wget and URLSession, and never reaches the request line or Host.
@Suite(.tags(.unit)) struct URLCredentialsTests {
    private func head(_ url: String, fields: [(String, String)] = [], defaults: [(name: String, value: String)] = [],
                      proxies: ProxyConfiguration = .none) throws -> String {
        var request = Request(url: URL(string: url)!)
        for (name, value) in fields { request.addValue(value, forHTTPHeaderField: name) }
        let prepared = try PreparedRequest(request, additionalFields: defaults, proxies: proxies)
        return String(decoding: prepared.bytes, as: UTF8.self)
    }

    private func basic(_ credentials: String) -> String {
        "Authorization: Basic " + Data(credentials.utf8).base64EncodedString() + "\r\n"
    }

    @Test func userAndPasswordAreSentAsBasicAndNowhereElse() throws {
        let head = try head("http://user:pass@h.test:8080/p?q=1")
        #expect(head.hasPrefix("GET /p?q=1 HTTP/1.1\r\nHost: h.test:8080\r\n"))
        #expect(head.contains(basic("user:pass")))
        #expect(!head.contains("user:pass@"), "userinfo must not reach the request line or Host")
    }

    @Test func percentEscapesAreDecodedToTheirBytes() throws {
        // "p@ss:w/rd" and "ü" (UTF-8 C3 BC) written escaped; a stray "%" stays as it is.
        #expect(try head("http://us%C3%BCr:p%40ss%3Aw%2Frd@h.test/").contains(basic("usür:p@ss:w/rd")))
        #expect(try head("http://a%zz:100%@h.test/").contains(basic("a%zz:100%")))
        // A byte that is not UTF-8 is sent as that byte: Basic carries octets.
        let escaped = try head("http://u:%FF@h.test/")
        #expect(escaped.contains("Authorization: Basic " + Data([0x75, 0x3A, 0xFF]).base64EncodedString() + "\r\n"))
    }

    @Test func aUserWithoutPasswordSendsAnEmptyPasswordAndEmptyUserinfoSendsNothing() throws {
        #expect(try head("http://user@h.test/").contains(basic("user:")))
        #expect(try head("http://:secret@h.test/").contains(basic(":secret")))
        #expect(try !head("http://@h.test/").contains("Authorization"))
        #expect(try !head("http://h.test/").contains("Authorization"))
    }

    @Test func anAuthorizationTheCallerSetWins() throws {
        let own = try head("http://user:pass@h.test/", fields: [("authorization", "Bearer t")])
        #expect(own.contains("authorization: Bearer t\r\n"))
        #expect(!own.contains("Basic"))
        let session = try head("http://user:pass@h.test/", defaults: [("Authorization", "Bearer s")])
        #expect(session.contains("Authorization: Bearer s\r\n"))
        #expect(!session.contains("Basic"))
    }

    @Test func throughAProxyTheOriginGetsTheCredentialsAndTheTargetHasNoUserinfo() throws {
        let proxies = ProxyConfiguration(httpProxy: URL(string: "http://pu:pp@proxy.test:3128")!)
        let head = try head("http://user:pass@h.test/x", proxies: proxies)
        #expect(head.hasPrefix("GET http://h.test/x HTTP/1.1\r\nHost: h.test\r\n"))
        #expect(head.contains(basic("user:pass")))
        #expect(head.contains("Proxy-Authorization: Basic " + Data("pu:pp".utf8).base64EncodedString() + "\r\n"))
    }

    @Test func proxyCredentialsAreDecodedOnceToTheirBytes() throws {
        // "%2541" is an escaped "%41": decoded once it is "%41", not "A".
        let proxies = ProxyConfiguration(httpProxy: URL(string: "http://a%2541:p%40ss@proxy.test:3128")!)
        let head = try head("http://h.test/x", proxies: proxies)
        #expect(head.contains("Proxy-Authorization: Basic " + Data("a%41:p@ss".utf8).base64EncodedString() + "\r\n"))
    }

    // MARK: Redirects

    private func redirect(from url: String, to location: String) throws -> Request {
        let request = Request(url: URL(string: url)!)
        let limits = RedirectPlanner.Limits(maximumRedirects: 5, allowsHTTPSToHTTP: false)
        return try RedirectPlanner.nextRequest(after: request, status: 302, location: location,
                                               visited: [.init(method: .get, url: url)], limits: limits).get()
    }

    @Test func credentialsFollowRedirectsWithinTheirOriginOnly() throws {
        #expect(try redirect(from: "http://u:p@a.test/x", to: "/y").url.absoluteString == "http://u:p@a.test/y")
        #expect(try redirect(from: "http://u:p@a.test/x", to: "http://A.test:80/y").url.absoluteString == "http://u:p@A.test:80/y")
        #expect(try redirect(from: "http://u:p@a.test/x", to: "http://b.test/y").url.absoluteString == "http://b.test/y")
        #expect(try redirect(from: "http://u:p@a.test/x", to: "//b.test/y").url.absoluteString == "http://b.test/y")
        #expect(try redirect(from: "http://u:p@a.test/x", to: "http://a.test:8080/y").url.absoluteString == "http://a.test:8080/y")
        // A Location's own credentials are the server's choice for its target.
        #expect(try redirect(from: "http://u:p@a.test/x", to: "http://v:q@a.test/y").url.absoluteString == "http://v:q@a.test/y")
    }
}
