import Foundation
import HTTPTypes
import Testing
@testable import UVNetworking

extension EndToEnd {
    /// Cookies against httpbin: what the server sets comes back in later requests, as httpbin's
    /// `/cookies` echoes them. httpbin's `/cookies/set` and `/cookies/delete` answer 302 to
    /// `/cookies`: the cookies the redirect set are stored before it is followed, so the final
    /// response already shows them.
    @Suite(.tags(.nginx)) struct Cookies {
        /// The cookies httpbin received with a GET of `/cookies`.
        private func echoed(_ harness: ClientHarness, _ httpbin: HTTPBinServer, handlingCookies: Bool = true,
                            sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: String] {
            var request = ClientHarness.request(httpbin.baseURL + "/cookies")
            request.httpShouldHandleCookies = handlingCookies
            let outcome = harness.fetch(request, sourceLocation: sourceLocation)
            #expect(outcome.status == 200, sourceLocation: sourceLocation)
            let json = try JSONSerialization.jsonObject(with: try #require(outcome.data, sourceLocation: sourceLocation))
            return try #require((json as? [String: Any])?["cookies"] as? [String: String], sourceLocation: sourceLocation)
        }

        private func harness(_ store: CookieStore?) -> ClientHarness {
            ClientHarness { $0.cookieStore = store }
        }

        @Test func aSetCookieHeaderIsSentBack() throws {
            let httpbin = try TestServers.httpbin()
            let store = CookieStore()
            let harness = harness(store)
            let set = harness.fetch(httpbin.baseURL + "/response-headers?Set-Cookie=flavor%3Dchoc%3B%20Path%3D%2F%3B%20HttpOnly")
            #expect(set.status == 200)
            #expect(set.response?.headerFields[.setCookie] == "flavor=choc; Path=/; HttpOnly")
            // Stored before the completion handler ran.
            #expect(store.allCookies.map(\.description) == ["flavor=choc"])
            #expect(try echoed(harness, httpbin) == ["flavor": "choc"])
            harness.finish()
        }

        @Test func cookiesSetThenDeleted() throws {
            let httpbin = try TestServers.httpbin()
            let store = CookieStore()
            let harness = harness(store)
            let set = harness.fetch(httpbin.baseURL + "/cookies/set?name=value&other=2")
            #expect(set.status == 200)
            // The redirect's cookies went with the request it led to.
            #expect(set.text?.contains("\"name\":\"value\"") == true, "\(set.text ?? "")")
            #expect(try echoed(harness, httpbin) == ["name": "value", "other": "2"])
            let delete = harness.fetch(httpbin.baseURL + "/cookies/delete?name")
            #expect(delete.status == 200)
            #expect(store.allCookies.map(\.name) == ["other"])
            #expect(try echoed(harness, httpbin) == ["other": "2"])
            harness.finish()
        }

        @Test func aRequestThatOptsOutNeitherSendsNorStores() throws {
            let httpbin = try TestServers.httpbin()
            let store = CookieStore()
            let harness = harness(store)
            _ = harness.fetch(httpbin.baseURL + "/cookies/set?kept=1")
            #expect(try echoed(harness, httpbin, handlingCookies: false) == [:])
            var request = ClientHarness.request(httpbin.baseURL + "/cookies/set?ignored=1")
            request.httpShouldHandleCookies = false
            #expect(harness.fetch(request).status == 200)
            #expect(store.allCookies.map(\.name) == ["kept"])
            // The request's own Cookie field is sent instead of the store's.
            let own = harness.fetch(ClientHarness.request(httpbin.baseURL + "/cookies", fields: [("Cookie", "mine=1")]))
            #expect(own.text?.contains("\"mine\"") == true && own.text?.contains("kept") == false)
            harness.finish()
        }

        @Test func aSessionWithoutAStoreHasNoCookies() throws {
            let httpbin = try TestServers.httpbin()
            let harness = harness(nil)
            #expect(harness.fetch(httpbin.baseURL + "/cookies/set?a=1").status == 200)
            #expect(try echoed(harness, httpbin) == [:])
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
            #expect(try echoed(harness, httpbin) == ["plain": "1"])
            harness.finish()
        }

        @Test func asyncRequestsStoreCookiesToo() async throws {
            let httpbin = try TestServers.httpbin()
            let store = CookieStore()
            let harness = harness(store)
            _ = try await harness.manager.data(for: ClientHarness.request(httpbin.baseURL + "/cookies/set?viaData=1"))
            // bytes(for:) has stored them once the head is returned, before the body is read.
            let (response, body) = try await harness.manager.bytes(
                for: ClientHarness.request(httpbin.baseURL + "/response-headers?Set-Cookie=viaBytes%3D2"))
            #expect(response.status.code == 200)
            #expect(Set(store.allCookies.map(\.name)) == ["viaData", "viaBytes"])
            for try await _ in body {}
            let echo = try await harness.manager.data(for: ClientHarness.request(httpbin.baseURL + "/cookies"))
            let json = try JSONSerialization.jsonObject(with: echo.data) as? [String: Any]
            #expect(json?["cookies"] as? [String: String] == ["viaData": "1", "viaBytes": "2"])
            harness.finish()
        }
    }
}
