import Foundation
import HTTPTypes
import Testing
@testable import UVNetworking

extension EndToEnd {
    /// Cookies against httpbin, over each protocol: what the server sets comes back in later
    /// requests (over HTTP/2 too, where a Cookie field may travel split), as httpbin's
    /// `/cookies` echoes them. httpbin's `/cookies/set` and `/cookies/delete` answer 302 to
    /// `/cookies`: the cookies the redirect set are stored before it is followed, so the final
    /// response already shows them.
    @Suite(.tags(.nginx)) struct Cookies {
        /// The cookies httpbin received with a GET of `/cookies`.
        private func echoed(_ harness: ClientHarness, _ base: String, handlingCookies: Bool = true,
                            sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: String] {
            var request = ClientHarness.request(base + "/cookies")
            request.httpShouldHandleCookies = handlingCookies
            let outcome = harness.fetch(request, sourceLocation: sourceLocation)
            #expect(outcome.status == 200, sourceLocation: sourceLocation)
            let json = try JSONSerialization.jsonObject(with: try #require(outcome.data, sourceLocation: sourceLocation))
            return try #require((json as? [String: Any])?["cookies"] as? [String: String], sourceLocation: sourceLocation)
        }

        private func harness(_ store: CookieStore?, _ wire: Wire = .http1_1) -> ClientHarness {
            wire.harness { $0.cookieStore = store }
        }

        @Test(arguments: Wire.allCases) func aSetCookieHeaderIsSentBack(_ wire: Wire) throws {
            let base = try wire.httpbinBaseURL()
            let store = CookieStore()
            let harness = harness(store, wire)
            let set = harness.fetch(base + "/response-headers?Set-Cookie=flavor%3Dchoc%3B%20Path%3D%2F%3B%20HttpOnly")
            #expect(set.status == 200)
            #expect(set.response?.headerFields[.setCookie] == "flavor=choc; Path=/; HttpOnly")
            // Stored before the completion handler ran.
            #expect(store.allCookies.map(\.description) == ["flavor=choc"])
            #expect(try echoed(harness, base) == ["flavor": "choc"])
            harness.finish()
        }

        @Test(arguments: Wire.allCases) func cookiesSetThenDeleted(_ wire: Wire) throws {
            let base = try wire.httpbinBaseURL()
            let store = CookieStore()
            let harness = harness(store, wire)
            let set = harness.fetch(base + "/cookies/set?name=value&other=2")
            #expect(set.status == 200)
            // The redirect's cookies went with the request it led to.
            #expect(set.text?.contains("\"name\":\"value\"") == true, "\(set.text ?? "")")
            #expect(try echoed(harness, base) == ["name": "value", "other": "2"])
            let delete = harness.fetch(base + "/cookies/delete?name")
            #expect(delete.status == 200)
            #expect(store.allCookies.map(\.name) == ["other"])
            #expect(try echoed(harness, base) == ["other": "2"])
            harness.finish()
        }

        @Test(arguments: Wire.allCases) func aRequestThatOptsOutNeitherSendsNorStores(_ wire: Wire) throws {
            let base = try wire.httpbinBaseURL()
            let store = CookieStore()
            let harness = harness(store, wire)
            _ = harness.fetch(base + "/cookies/set?kept=1")
            #expect(try echoed(harness, base, handlingCookies: false) == [:])
            var request = ClientHarness.request(base + "/cookies/set?ignored=1")
            request.httpShouldHandleCookies = false
            #expect(harness.fetch(request).status == 200)
            #expect(store.allCookies.map(\.name) == ["kept"])
            // The request's own Cookie field is sent instead of the store's.
            let own = harness.fetch(ClientHarness.request(base + "/cookies", fields: [("Cookie", "mine=1")]))
            #expect(own.text?.contains("\"mine\"") == true && own.text?.contains("kept") == false)
            harness.finish()
        }

        @Test(arguments: Wire.allCases) func aSessionWithoutAStoreHasNoCookies(_ wire: Wire) throws {
            let base = try wire.httpbinBaseURL()
            let harness = harness(nil, wire)
            #expect(harness.fetch(base + "/cookies/set?a=1").status == 200)
            #expect(try echoed(harness, base) == [:])
            harness.finish()
        }

        @Test func secureCookiesAreNotSentOverHTTP() throws {
            let httpbin = try TestServers.httpbin()
            let store = CookieStore()
            let harness = harness(store)
            // Over plain http a server cannot set a Secure cookie at all.
            _ = harness.fetch(httpbin.baseURL + "/response-headers?Set-Cookie=early%3D1%3B%20Secure")
            #expect(store.allCookies.isEmpty)
            // Set for the same host over https, it is kept, but not sent over http.
            let https = URL(string: "https://127.0.0.1:\(httpbin.port)/")!
            store.setCookies(fromSetCookieHeaders: ["token=s3cret; Secure", "plain=1"], for: https)
            #expect(store.allCookies.count == 2)
            #expect(try echoed(harness, httpbin.baseURL) == ["plain": "1"])
            harness.finish()
        }

        /// Over https (the HTTP/2 front) a Secure cookie is stored and sent back.
        @Test func secureCookiesTravelOverHTTPS() throws {
            let base = try Wire.h2.httpbinBaseURL()
            let store = CookieStore()
            let harness = harness(store, .h2)
            #expect(harness.fetch(base + "/response-headers?Set-Cookie=token%3Ds3cret%3B%20Secure").status == 200)
            #expect(store.allCookies.map(\.name) == ["token"])
            #expect(try echoed(harness, base) == ["token": "s3cret"])
            harness.finish()
        }

        @Test(arguments: Wire.allCases) func asyncRequestsStoreCookiesToo(_ wire: Wire) async throws {
            let base = try wire.httpbinBaseURL()
            let store = CookieStore()
            let harness = harness(store, wire)
            _ = try await harness.manager.data(for: ClientHarness.request(base + "/cookies/set?viaData=1"))
            // bytes(for:) has stored them once the head is returned, before the body is read.
            let (response, body) = try await harness.manager.bytes(
                for: ClientHarness.request(base + "/response-headers?Set-Cookie=viaBytes%3D2"))
            #expect(response.status.code == 200)
            #expect(Set(store.allCookies.map(\.name)) == ["viaData", "viaBytes"])
            for try await _ in body {}
            let echo = try await harness.manager.data(for: ClientHarness.request(base + "/cookies"))
            let json = try JSONSerialization.jsonObject(with: echo.data) as? [String: Any]
            #expect(json?["cookies"] as? [String: String] == ["viaData": "1", "viaBytes": "2"])
            harness.finish()
        }
    }
}
