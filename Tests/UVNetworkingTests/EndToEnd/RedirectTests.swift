import Foundation
import HTTPTypes
import Synchronization
import Testing
@testable import UVNetworking

extension EndToEnd {
    /// Redirects end to end: httpbin's redirect endpoints over each protocol, redirects from an
    /// origin of one protocol to one of the other, and scripted servers for cycles, origins and
    /// the https-to-http refusal.
    @Suite(.tags(.nginx)) struct RedirectTests {
        let httpbin: HTTPBinServer
        init() throws { httpbin = try TestServers.httpbin() }

        private func json(_ outcome: Outcome) -> [String: Any]? {
            outcome.data.flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
        }

        @Test(arguments: Wire.allCases, ["/redirect/3", "/relative-redirect/3", "/absolute-redirect/3"])
        func followsChainsToTheFinalResponse(_ wire: Wire, path: String) async throws {
            let base = try wire.httpbinBaseURL()
            let harness = wire.harness()
            defer { harness.finish() }
            let response = try await harness.manager.data(for: Request(url: URL(string: base + path)!))
            #expect(response.response.status.code == 200)
            #expect(response.metrics?.redirectCount == 3)
            let body = try JSONSerialization.jsonObject(with: response.data) as? [String: Any]
            #expect((body?["url"] as? String)?.hasSuffix("/get") == true)
        }

        @Test(arguments: Wire.allCases) func currentRequestIsWhereTheRedirectsLed(_ wire: Wire) throws {
            let base = try wire.httpbinBaseURL()
            let harness = wire.harness()
            defer { harness.finish() }
            let (task, wait) = harness.makeTask(ClientHarness.request(base + "/redirect/2"))
            task.resume()
            #expect(wait(30)?.status == 200)
            #expect(task.originalRequest.url.path == "/redirect/2")
            #expect(task.currentRequest.url.path == "/get")
        }

        @Test(arguments: Wire.allCases) func status307And308KeepMethodAndBody(_ wire: Wire) throws {
            let base = try wire.httpbinBaseURL()
            let harness = wire.harness()
            defer { harness.finish() }
            for status in [307, 308] {
                let outcome = harness.fetch(base + "/redirect-to?url=/post&status_code=\(status)", method: .post,
                                            fields: [("Content-Type", "application/x-www-form-urlencoded")], body: "a=1")
                #expect(outcome.status == 200, "\(status)")
                #expect((json(outcome)?["form"] as? [String: Any])?["a"] as? String == "1", "\(status)")
            }
        }

        @Test(arguments: Wire.allCases) func status302And303TurnAPostIntoAGet(_ wire: Wire) throws {
            let base = try wire.httpbinBaseURL()
            let harness = wire.harness()
            defer { harness.finish() }
            for status in [301, 302, 303] {
                // /get answers 405 to anything but GET (and HEAD, OPTIONS).
                let outcome = harness.fetch(base + "/redirect-to?url=/get&status_code=\(status)", method: .post, body: "a=1")
                #expect(outcome.status == 200, "\(status)")
            }
        }

        @Test(arguments: Wire.allCases) func streamedBodyIsSentAgainOn307(_ wire: Wire) throws {
            let base = try wire.httpbinBaseURL()
            let harness = wire.harness()
            defer { harness.finish() }
            let made = Mutex(0)
            var request = ClientHarness.request(base + "/redirect-to?url=/post&status_code=307", method: .post)
            request.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
            request.bodyStream = StreamedBody(length: 5, inputStream: {
                made.withLock { $0 += 1 }
                return InputStream(data: Data("hello".utf8))
            })
            let outcome = harness.fetch(request)
            #expect(outcome.status == 200)
            #expect(json(outcome)?["data"] as? String == "hello")
            #expect(made.withLock { $0 } == 2)
        }

        @Test(arguments: Wire.allCases) func limitFailsWithTheLastRedirectInTheError(_ wire: Wire) throws {
            let base = try wire.httpbinBaseURL()
            let harness = wire.harness { $0.maximumRedirects = 2 }
            defer { harness.finish() }
            let outcome = harness.fetch(base + "/redirect/3")
            let error = try #require(outcome.error as? NetworkingError)
            #expect(error.code == .tooManyRedirects)
            #expect(error.nsError.code == NSURLErrorHTTPTooManyRedirects)
            #expect(error.response?.status.code == 302)
        }

        @Test(arguments: Wire.allCases) func zeroRedirectsDeliversTheRedirectItself(_ wire: Wire) throws {
            let base = try wire.httpbinBaseURL()
            let harness = wire.harness { $0.maximumRedirects = 0 }
            defer { harness.finish() }
            let outcome = harness.fetch(base + "/redirect-to?url=/get")
            #expect(outcome.status == 302)
            #expect(outcome.response?.headerFields[.location] == "/get")
        }

        @Test(arguments: Wire.allCases) func hookCanStopOrChangeTheRedirect(_ wire: Wire) throws {
            let base = try wire.httpbinBaseURL()
            let harness = wire.harness()
            defer { harness.finish() }
            let seen = Mutex<[Int]>([])
            harness.manager.taskWillPerformHTTPRedirection = { _, response, request in
                seen.withLock { $0.append(response.status.code) }
                if request.url.path == "/get" {
                    var changed = request
                    changed.setValue("yes", forHTTPHeaderField: "X-Changed")
                    return changed
                }
                return nil
            }
            let changed = harness.fetch(base + "/redirect-to?url=/get")
            #expect(changed.status == 200)
            #expect((json(changed)?["headers"] as? [String: Any])?["X-Changed"] as? String == "yes")
            let stopped = harness.fetch(base + "/redirect-to?url=/anything&status_code=307")
            #expect(stopped.status == 307)
            #expect(seen.withLock { $0 } == [302, 307])
        }

        /// A redirect may lead to an origin that speaks the other protocol: each hop speaks what
        /// its origin speaks, and the transaction metrics name it hop by hop. (From https the
        /// HTTP/1.1 origin is the front's HTTP/1.1-only TLS port: https to http is refused.)
        @Test func redirectsCrossBetweenHTTP2AndHTTP11Origins() async throws {
            let front = try TestServers.httpbinH2()
            let harness = Wire.h2.harness()
            defer { harness.finish() }
            func redirect(from origin: String, to target: String) -> Request {
                let encoded = target.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? target
                return Request(url: URL(string: origin + "/redirect-to?url=" + encoded)!)
            }
            let chains: [(Request, [String])] = [
                (redirect(from: httpbin.baseURL, to: front.baseURL + "/get"), ["http/1.1", "h2"]),
                (redirect(from: front.baseURL, to: front.http1TLSBaseURL + "/get"), ["h2", "http/1.1"]),
                (redirect(from: front.http1TLSBaseURL, to: front.baseURL + "/get"), ["http/1.1", "h2"]),
            ]
            for (request, spoken) in chains {
                let response = try await harness.manager.data(for: request)
                #expect(response.response.status.code == 200)
                #expect(response.metrics?.redirectCount == 1)
                #expect(response.metrics?.transactions.map(\.networkProtocolName) == spoken, "\(request.url)")
                let body = try JSONSerialization.jsonObject(with: response.data) as? [String: Any]
                #expect((body?["url"] as? String)?.hasSuffix("/get") == true)
            }
        }

        /// Only the redirect limit ends a loop: a URL already visited is requested again.
        @Test func loopEndsAtTheLimit() throws {
            let requests = Atomic<Int>(0)
            let server = try ScriptedServer { connection in
                try connection.serveKeepAlive { request in
                    requests.add(1, ordering: .relaxed)
                    return ScriptedResponse.text("", status: 302, reason: "Found",
                                                 headers: [("Location", request.target == "/a" ? "/b" : "/a")])
                }
            }
            defer { server.stop() }
            let harness = ClientHarness { $0.maximumRedirects = 5 }
            defer { harness.finish() }
            #expect(harness.fetch("http://127.0.0.1:\(server.port)/a").code == .tooManyRedirects)
            #expect(requests.load(ordering: .relaxed) == 6)
        }

        /// A server that sets a cookie and redirects to the URL just requested (a login gate, a
        /// consent page): the second visit carries the cookie and gets the page.
        @Test func redirectBackToTheSameURLWithACookieIsFollowed() throws {
            let server = try ScriptedServer { connection in
                try connection.serveKeepAlive { request in
                    if request.header("Cookie") == "seen=1" { return ScriptedResponse.text("welcome") }
                    return ScriptedResponse.text("", status: 302, reason: "Found",
                                                 headers: [("Set-Cookie", "seen=1; Path=/"), ("Location", request.target)])
                }
            }
            defer { server.stop() }
            let harness = ClientHarness { $0.cookieStore = CookieStore() }
            defer { harness.finish() }
            let outcome = harness.fetch("http://127.0.0.1:\(server.port)/gate")
            #expect(outcome.error == nil)
            #expect(outcome.text == "welcome")
        }

        /// A 3xx whose Location is empty or blank is the response, like one without Location.
        @Test(arguments: ["", " "])
        func blankLocationDeliversTheRedirect(location: String) throws {
            let server = try ScriptedServer { connection in
                try connection.serveKeepAlive { _ in
                    "HTTP/1.1 302 Found\r\nLocation:\(location)\r\nContent-Length: 4\r\n\r\nhere"
                }
            }
            defer { server.stop() }
            let harness = ClientHarness()
            defer { harness.finish() }
            let outcome = harness.fetch("http://127.0.0.1:\(server.port)/")
            #expect(outcome.error == nil)
            #expect(outcome.status == 302)
            #expect(outcome.text == "here")
        }

        @Test func credentialsStayWithTheirOrigin() throws {
            let echo = try ScriptedServer { connection in
                try connection.serveKeepAlive { request in
                    ScriptedResponse.text(request.headers.map { "\($0.0.lowercased())=\($0.1)" }.joined(separator: "\n"))
                }
            }
            defer { echo.stop() }
            let redirector = try ScriptedServer { connection in
                try connection.serveKeepAlive { request in
                    if request.target == "/same" { return ScriptedResponse.text("", status: 302, reason: "Found", headers: [("Location", "/echo")]) }
                    if request.target == "/echo" {
                        return ScriptedResponse.text(request.headers.map { "\($0.0.lowercased())=\($0.1)" }.joined(separator: "\n"))
                    }
                    return ScriptedResponse.text("", status: 302, reason: "Found", headers: [("Location", "http://127.0.0.1:\(echo.port)/")])
                }
            }
            defer { redirector.stop() }
            let harness = ClientHarness()
            defer { harness.finish() }
            let fields = [("Authorization", "Basic dTpw"), ("Cookie", "s=1"), ("X-Custom", "kept")]
            let crossed = harness.fetch("http://127.0.0.1:\(redirector.port)/other", fields: fields).text ?? ""
            #expect(crossed.contains("x-custom=kept"))
            #expect(!crossed.contains("authorization="))
            #expect(!crossed.contains("cookie="))
            let same = harness.fetch("http://127.0.0.1:\(redirector.port)/same", fields: fields).text ?? ""
            #expect(same.contains("authorization=Basic dTpw"))
            #expect(same.contains("cookie=s=1"))
        }

        @Test func httpsToHTTPIsRefusedAndNothingIsSent() throws {
            let plain = try ScriptedServer { connection in
                try connection.serveKeepAlive { _ in ScriptedResponse.text("clear") }
            }
            defer { plain.stop() }
            let pki = TestPKI.standard
            let secure = try ScriptedServer { connection in
                let tls = try ScriptedTLS(connection, chain: pki.sentChain, key: pki.leaf.key)
                try tls.handshake()
                _ = try tls.readRequestHead()
                try tls.write("HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:\(plain.port)/\r\nContent-Length: 0\r\n\r\n")
                try tls.closeNotify()
            }
            defer { secure.stop() }
            let harness = tlsHarness()
            defer { harness.finish() }
            #expect(harness.fetch("https://localhost:\(secure.port)/").code == .insecureRedirect)
            #expect(plain.acceptedCount == 0)
        }
    }
}
