import Foundation
import HTTPTypes
import Testing
@testable import UVNetworking

/// AFHTTPRequestSerializer's behaviour: where parameters go, default headers, settings.
@Suite(.tags(.unit)) struct HTTPRequestSerializerTests {
    private func request(_ url: String, _ method: HTTPRequest.Method = .get) -> Request {
        Request(url: URL(string: url)!, method: method)
    }

    private struct Failure: Error, Equatable { let reason: String }

    // MARK: Where parameters go

    @Test func uriMethodsAppendTheQueryToTheURL() throws {
        let serializer = HTTPRequestSerializer()
        for method: HTTPRequest.Method in [.get, .head, .delete] {
            let result = try serializer.serialize(request("http://example.com/path", method),
                                                  parameters: ["key": "value", "key1": "value&"])
            #expect(result.url.absoluteString == "http://example.com/path?key=value&key1=value%26")
            #expect(result.body == nil)
            #expect(result.value(forHTTPHeaderField: "Content-Type") == nil)
        }
    }

    @Test func anExistingQueryIsExtendedWithAmpersand() throws {
        let result = try HTTPRequestSerializer().serialize(request("http://example.com/path?a=1"), parameters: ["b": "2"])
        #expect(result.url.absoluteString == "http://example.com/path?a=1&b=2")
    }

    @Test func theQueryGoesBeforeAFragment() throws {
        let result = try HTTPRequestSerializer().serialize(request("http://example.com/p#frag"), parameters: ["b": "2"])
        #expect(result.url.absoluteString == "http://example.com/p?b=2#frag")
    }

    @Test func anEmptyQueryAddsNothing() throws {
        let serializer = HTTPRequestSerializer()
        #expect(try serializer.serialize(request("http://example.com/p"), parameters: [String: Any]()).url.absoluteString
            == "http://example.com/p")
        #expect(try serializer.serialize(request("http://example.com/p?a=1"), parameters: ["k": [String]()]).url.absoluteString
            == "http://example.com/p?a=1")
        #expect(try serializer.serialize(request("http://example.com/p"), parameters: nil).url.absoluteString
            == "http://example.com/p")
    }

    @Test func lowercaseMethodNamesCountAsURIMethods() throws {
        let method = try #require(HTTPRequest.Method("get"))
        let result = try HTTPRequestSerializer().serialize(request("http://example.com/", method), parameters: ["a": "b"])
        #expect(result.url.absoluteString == "http://example.com/?a=b")
    }

    @Test func otherMethodsGetAFormBody() throws {
        let serializer = HTTPRequestSerializer()
        for method: HTTPRequest.Method in [.post, .put, .patch] {
            let result = try serializer.serialize(request("http://example.com/p", method),
                                                  parameters: ["key": "value", "key1": "value&"])
            #expect(result.url.absoluteString == "http://example.com/p")
            #expect(result.body == Data("key=value&key1=value%26".utf8))
            #expect(result.value(forHTTPHeaderField: "Content-Type") == "application/x-www-form-urlencoded")
        }
    }

    @Test func emptyParametersGiveAnEmptyFormBody() throws {
        let result = try HTTPRequestSerializer().serialize(request("http://example.com/", .post), parameters: [String: Any]())
        #expect(result.body == Data())
        #expect(result.value(forHTTPHeaderField: "Content-Type") == "application/x-www-form-urlencoded")
    }

    @Test func nilParametersLeaveTheBodyAlone() throws {
        var original = request("http://example.com/", .post)
        original.body = Data("raw".utf8)
        let result = try HTTPRequestSerializer().serialize(original, parameters: nil)
        #expect(result.body == Data("raw".utf8))
        #expect(result.value(forHTTPHeaderField: "Content-Type") == nil)
    }

    @Test func aContentTypeAlreadySetIsKept() throws {
        var original = request("http://example.com/", .post)
        original.setValue("text/plain; charset=utf-8", forHTTPHeaderField: "content-type")
        let result = try HTTPRequestSerializer().serialize(original, parameters: ["a": "b"])
        #expect(result.value(forHTTPHeaderField: "Content-Type") == "text/plain; charset=utf-8")
        #expect(result.headerFields.filter { $0.name.lowercased() == "content-type" }.count == 1)
        #expect(result.body == Data("a=b".utf8))
    }

    @Test func theURIMethodsCanBeChanged() throws {
        let serializer = HTTPRequestSerializer()
        #expect(serializer.httpMethodsEncodingParametersInURI == [.get, .head, .delete])
        serializer.httpMethodsEncodingParametersInURI = [.get]
        let result = try serializer.serialize(request("http://example.com/", .delete), parameters: ["a": "b"])
        #expect(result.url.absoluteString == "http://example.com/")
        #expect(result.body == Data("a=b".utf8))
    }

    // MARK: Building requests

    @Test func requestBuildsAndSerializes() throws {
        let result = try HTTPRequestSerializer().request(method: .get, urlString: "http://example.com/search",
                                                         parameters: ["q": "a b"])
        #expect(result.url.absoluteString == "http://example.com/search?q=a%20b")
        #expect(result.method == .get)
        #expect(result.timeoutInterval == 60)
    }

    @Test(arguments: ["", "not a url", "/relative/path", "http://[::1"])
    func requestRejectsUnusableURLStrings(_ urlString: String) {
        #expect {
            try HTTPRequestSerializer().request(method: .get, urlString: urlString, parameters: nil)
        } throws: { ($0 as? NetworkingError)?.code == .invalidURL }
    }

    // MARK: Default headers

    @Test func defaultHeadersArePresentAndASCII() throws {
        let serializer = HTTPRequestSerializer()
        #expect(serializer.httpRequestHeaders.map(\.name) == ["Accept-Language", "User-Agent"])
        let userAgent = try #require(serializer.value(forHTTPHeaderField: "user-agent"))
        let acceptLanguage = try #require(serializer.value(forHTTPHeaderField: "ACCEPT-LANGUAGE"))
        #expect(userAgent.contains("/") && userAgent.contains(" (Linux; ") && userAgent.hasSuffix(")"))
        #expect(acceptLanguage.contains(";q=1"))
        for value in [userAgent, acceptLanguage] {
            #expect(value.unicodeScalars.allSatisfy { (0x20..<0x7F).contains($0.value) })
        }
        let result = try serializer.serialize(request("http://example.com/"), parameters: nil)
        #expect(result.value(forHTTPHeaderField: "User-Agent") == userAgent)
        #expect(result.value(forHTTPHeaderField: "Accept-Language") == acceptLanguage)
    }

    @Test func acceptLanguageFollowsAFNetworkingsFormat() {
        #expect(HTTPRequestSerializer.acceptLanguage(for: ["en-US", "fr"]) == "en-US;q=1, fr;q=0.9")
        #expect(HTTPRequestSerializer.acceptLanguage(for: ["a", "b", "c", "d", "e", "f", "g", "h"])
            == "a;q=1, b;q=0.9, c;q=0.8, d;q=0.7, e;q=0.6, f;q=0.5")
        #expect(HTTPRequestSerializer.acceptLanguage(for: []) == "en;q=1")
        #expect(HTTPRequestSerializer.acceptLanguage(for: ["en_GB", "x\r\n;,", ""]) == "en-GB;q=1, x;q=0.9")
    }

    @Test func userAgentIsReducedToPrintableASCII() {
        #expect(HTTPRequestSerializer.userAgent(executable: "Ünïcødé", version: "1.2", osVersion: "Debian\r\n 12")
            == "Unicode/1.2 (Linux; Debian 12)")
        #expect(HTTPRequestSerializer.asciiHeaderValue("a\u{0}b\tc\u{7F}d🙂") == "abcd")
    }

    @Test func headersAreSetReplacedAndRemovedCaseInsensitively() {
        let serializer = HTTPRequestSerializer()
        serializer.setValue("1", forHTTPHeaderField: "X-Test")
        serializer.setValue("2", forHTTPHeaderField: "x-test")
        #expect(serializer.value(forHTTPHeaderField: "X-TEST") == "2")
        #expect(serializer.httpRequestHeaders.filter { $0.name.lowercased() == "x-test" }.count == 1)
        serializer.setValue(nil, forHTTPHeaderField: "X-Test")
        #expect(serializer.value(forHTTPHeaderField: "x-test") == nil)
        serializer.setValue(nil, forHTTPHeaderField: "User-Agent")
        #expect(serializer.httpRequestHeaders.map(\.name) == ["Accept-Language"])
    }

    @Test func defaultHeadersDoNotOverrideTheRequestsOwn() throws {
        let serializer = HTTPRequestSerializer()
        serializer.setValue("default", forHTTPHeaderField: "X-Test")
        var original = request("http://example.com/")
        original.setValue("mine", forHTTPHeaderField: "user-agent")
        original.setValue("own", forHTTPHeaderField: "x-TEST")
        let result = try serializer.serialize(original, parameters: nil)
        #expect(result.value(forHTTPHeaderField: "User-Agent") == "mine")
        #expect(result.value(forHTTPHeaderField: "X-Test") == "own")
        #expect(result.headerFields.count == 3)
    }

    @Test func basicAuthorization() throws {
        let serializer = HTTPRequestSerializer()
        serializer.setAuthorizationHeaderField(username: "user", password: "password")
        #expect(serializer.value(forHTTPHeaderField: "Authorization") == "Basic dXNlcjpwYXNzd29yZA==")
        let result = try serializer.serialize(request("http://example.com/"), parameters: nil)
        #expect(result.value(forHTTPHeaderField: "Authorization") == "Basic dXNlcjpwYXNzd29yZA==")
        serializer.setAuthorizationHeaderField(username: "ü", password: "p:w")
        #expect(serializer.value(forHTTPHeaderField: "Authorization") == "Basic w7w6cDp3")
        serializer.clearAuthorizationHeader()
        #expect(serializer.value(forHTTPHeaderField: "Authorization") == nil)
    }

    // MARK: Properties

    @Test func timeoutIsAppliedOnlyWhenSet() throws {
        let serializer = HTTPRequestSerializer()
        var original = request("http://example.com/")
        original.timeoutInterval = 12
        #expect(serializer.timeoutInterval == nil)
        #expect(try serializer.serialize(original, parameters: nil).timeoutInterval == 12)
        serializer.timeoutInterval = 5
        #expect(try serializer.serialize(original, parameters: nil).timeoutInterval == 5)
        #expect(try serializer.request(method: .get, urlString: "http://example.com/", parameters: nil).timeoutInterval == 5)
    }

    @Test func cookieHandlingIsAppliedOnlyWhenSet() throws {
        let serializer = HTTPRequestSerializer()
        var original = request("http://example.com/")
        original.httpShouldHandleCookies = false
        #expect(serializer.httpShouldHandleCookies == nil)
        #expect(try serializer.serialize(original, parameters: nil).httpShouldHandleCookies == false)
        #expect(try serializer.request(method: .get, urlString: "http://example.com/", parameters: nil).httpShouldHandleCookies)
        serializer.httpShouldHandleCookies = false
        #expect(try serializer.request(method: .get, urlString: "http://example.com/", parameters: nil).httpShouldHandleCookies == false)
        serializer.httpShouldHandleCookies = true
        #expect(try serializer.serialize(original, parameters: nil).httpShouldHandleCookies)
    }

    @Test func aBodyTheEncodingCannotHoldFails() {
        let serializer = HTTPRequestSerializer()
        serializer.stringEncoding = .ascii
        serializer.setQueryStringSerialization { _, _ in "name=é" }
        #expect {
            try serializer.serialize(request("http://example.com/", .post), parameters: ["a": "b"])
        } throws: { ($0 as? NetworkingError)?.code == .requestSerializationFailed }
    }

    // MARK: Custom query strings

    @Test func aCustomQueryClosureReplacesTheDefault() throws {
        let serializer = HTTPRequestSerializer()
        serializer.setQueryStringSerialization { request, parameters in
            let dictionary = parameters as? [String: String] ?? [:]
            return "\(request.method.rawValue.lowercased())=\(dictionary["x"] ?? "none")"
        }
        #expect(try serializer.serialize(request("http://example.com/?a=1"), parameters: ["x": "y"]).url.absoluteString
            == "http://example.com/?a=1&get=y")
        #expect(try serializer.serialize(request("http://example.com/", .post), parameters: ["x": "z"]).body
            == Data("post=z".utf8))
    }

    @Test func aThrowingQueryClosureFailsWithTheErrorInside() throws {
        let serializer = HTTPRequestSerializer()
        serializer.setQueryStringSerialization { _, _ in throw Failure(reason: "nope") }
        let error = try #require(throws: NetworkingError.self) {
            try serializer.serialize(request("http://example.com/"), parameters: ["a": "b"])
        }
        #expect(error.code == .requestSerializationFailed)
        #expect(error.underlyingError as? Failure == Failure(reason: "nope"))
        #expect(error.failingURL?.absoluteString == "http://example.com/")
        #expect(error.detail.contains("nope"))
    }

    // MARK: Threads

    @Test func concurrentUseIsSafeAndEndsConsistent() throws {
        let serializer = HTTPRequestSerializer()
        DispatchQueue.concurrentPerform(iterations: 2_000) { i in
            let name = "X-Field-\(i % 10)"
            serializer.setValue(String(i), forHTTPHeaderField: name)
            _ = serializer.value(forHTTPHeaderField: name)
            _ = serializer.httpRequestHeaders
            serializer.timeoutInterval = TimeInterval(i % 7)
            if i % 3 == 0 { serializer.setAuthorizationHeaderField(username: "u\(i)", password: "p") }
            _ = try? serializer.serialize(Request(url: URL(string: "http://example.com/")!, method: .post),
                                          parameters: ["i": i])
        }
        let headers = serializer.httpRequestHeaders
        #expect(headers.count == 13)
        for k in 0..<10 {
            let value = try #require(serializer.value(forHTTPHeaderField: "x-field-\(k)"))
            #expect(Int(value).map { $0 % 10 } == k)
        }
        #expect(serializer.timeoutInterval.map { (0..<7).contains($0) } == true)
    }
}
