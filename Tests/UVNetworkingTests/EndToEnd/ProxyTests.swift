import Foundation
import Testing
@testable import UVNetworking

extension EndToEnd {
    /// Through tinyproxy: http in absolute form, https in a CONNECT tunnel (HTTP/2 inside it where
    /// the origin agrees), proxy credentials.
    @Suite(.tags(.nginx)) struct ProxyTests {
        private func harness(_ proxy: TinyProxyServer, withCredentials: Bool = true, tls: Bool = false) -> ClientHarness {
            let configure: (inout SessionConfiguration) -> Void = {
                $0.proxy = ProxyConfiguration(httpProxy: proxy.url(withCredentials: withCredentials),
                                              httpsProxy: proxy.url(withCredentials: withCredentials))
            }
            return tls ? tlsHarness(configure) : ClientHarness(configure)
        }

        @Test func httpGoesThroughTheProxyInAbsoluteForm() throws {
            let httpbin = try TestServers.httpbin()
            let proxy = try TestServers.tinyproxy()
            let harness = harness(proxy)
            defer { harness.finish() }
            let outcome = harness.fetch(httpbin.baseURL + "/headers")
            #expect(outcome.status == 200)
            // The proxy forwarded it: it logged the absolute-form request line.
            #expect(proxy.log().contains("GET \(httpbin.baseURL)/headers HTTP/1.1"), "\(proxy.log().suffix(500))")
        }

        @Test func httpsGoesThroughACONNECTTunnel() throws {
            let nginx = try TestServers.nginxTLS()
            let proxy = try TestServers.tinyproxy()
            let harness = harness(proxy, tls: true)
            defer { harness.finish() }
            let first = harness.fetch(nginx.url(.valid))
            #expect(first.status == 200)
            #expect(first.text == NginxTLSServer.helloBody)
            // Keep-alive inside the tunnel.
            #expect(harness.fetch(nginx.url(.valid)).status == 200)
            #expect(proxy.log().contains("CONNECT localhost:\(nginx.ports[.valid]!)"))
            // Certificates are still checked end to end, through the tunnel.
            #expect(harness.fetch(nginx.url(.expired)).code == .serverCertificateUntrusted)
        }

        /// ALPN runs inside the tunnel, with the origin: an h2 origin behind the proxy is spoken
        /// to in HTTP/2, and concurrent requests share the one tunnelled connection.
        @Test func anH2OriginIsSpokenToInHTTP2InsideTheTunnel() throws {
            let front = try TestServers.httpbinH2()
            let proxy = try TestServers.tinyproxy()
            let harness = harness(proxy, tls: true)
            defer { harness.finish() }
            let first = harness.fetch(front.baseURL + "/get")
            #expect(first.status == 200)
            #expect(first.networkProtocolName == "h2")
            let tasks = (0..<8).map { _ in harness.makeTask(ClientHarness.request(front.baseURL + "/get")) }
            for task in tasks { task.task.resume() }
            for task in tasks { #expect(task.wait(30)?.networkProtocolName == "h2") }
            #expect(harness.manager.openConnectionCount == 1)
            #expect(proxy.log().components(separatedBy: "CONNECT localhost:\(front.tlsPort)").count - 1 == 1,
                    "one tunnel: \(proxy.log().suffix(500))")
        }

        @Test func proxyCredentialsAreSentAndMissingOnesAreAClearError() throws {
            let nginx = try TestServers.nginxTLS()
            let httpbin = try TestServers.httpbin()
            let proxy = try TestServers.tinyproxyWithAuth()

            let authorized = harness(proxy, tls: true)
            defer { authorized.finish() }
            #expect(authorized.fetch(nginx.url(.valid)).status == 200)
            #expect(authorized.fetch(httpbin.baseURL + "/get").status == 200)

            let anonymous = harness(proxy, withCredentials: false, tls: true)
            defer { anonymous.finish() }
            let tunnel = anonymous.fetch(nginx.url(.valid))
            #expect(tunnel.code == .proxyAuthenticationRequired)
            // Over http the proxy's 407 is the response.
            #expect(anonymous.fetch(httpbin.baseURL + "/get").status == 407)
        }

        @Test func noProxyAndLoopbackGoDirect() throws {
            let nginx = try TestServers.nginx()
            // A proxy that does not exist: any request sent to it would fail.
            var configuration = ProxyConfiguration(httpProxy: URL(string: "http://127.0.0.1:1"), noProxy: ["127.0.0.1"])
            let direct = ClientHarness { $0.proxy = configuration }
            defer { direct.finish() }
            #expect(direct.fetch(nginx.baseURL + "/hello").status == 200)
            configuration.noProxy = []
            let proxied = ClientHarness { $0.proxy = configuration }
            defer { proxied.finish() }
            #expect(proxied.fetch(nginx.baseURL + "/hello").code == .connectionRefused)
        }

        @Test func unreachableProxyForHTTPSFailsAndLeavesNoSocketOpen() throws {
            // The tunnel's failed connect closes the socket under it too (the harness counts
            // the loop's handles at the end).
            let harness = tlsHarness { $0.proxy = ProxyConfiguration(httpsProxy: URL(string: "http://127.0.0.1:1")) }
            defer { harness.finish() }
            #expect(harness.fetch("https://localhost:1/").code == .connectionRefused)
        }

        @Test func proxyThatRefusesTheTunnelFailsClearly() throws {
            let server = try ScriptedServer { connection in
                _ = try connection.readRequestHead()
                try connection.write("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
                _ = connection.waitForPeerClose()
            }
            defer { server.stop() }
            let harness = tlsHarness { $0.proxy = ProxyConfiguration(httpsProxy: URL(string: "http://127.0.0.1:\(server.port)")) }
            defer { harness.finish() }
            let outcome = harness.fetch("https://localhost:1/")
            #expect(outcome.code == .proxyConnectFailed)
            #expect((outcome.error as? NetworkingError)?.detail.contains("403") == true)
        }
    }
}
