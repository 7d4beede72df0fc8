import Foundation
import Testing
@testable import UVNetworking

extension EndToEnd {
    /// A URL's user and password reach the server as Basic credentials, and only the server of
    /// that URL's origin.
    @Suite(.tags(.nginx)) struct URLCredentialsWireTests {
        /// Answers every request with its head, so the test sees what went on the wire.
        private func echoServer() throws -> ScriptedServer {
            try ScriptedServer { connection in
                try connection.serveKeepAlive { request in ScriptedResponse.text(request.head) }
            }
        }

        @Test(arguments: Wire.allCases) func httpbinAcceptsTheURLsCredentials(_ wire: Wire) throws {
            let base = try #require(URLComponents(string: try wire.httpbinBaseURL()))
            let harness = wire.harness()
            defer { harness.finish() }
            let origin = "\(base.scheme!)://%@\(base.host!):\(base.port!)"
            func url(_ userinfo: String, _ path: String) -> String { origin.replacingOccurrences(of: "%@", with: userinfo + "@") + path }
            let accepted = harness.fetch(url("user:pass", "/basic-auth/user/pass"))
            #expect(accepted.status == 200)
            wire.expectSpoken(accepted)
            #expect(harness.fetch(url("user:wrong", "/basic-auth/user/pass")).status == 401)
            // Escaped in the URL, decoded on the wire: "p@ss word".
            #expect(harness.fetch(url("user:p%40ss%20word", "/basic-auth/user/p@ss%20word")).status == 200)
        }

        @Test func theHeadCarriesBasicAndNoUserinfo() throws {
            let server = try echoServer()
            defer { server.stop() }
            let harness = ClientHarness()
            defer { harness.finish() }
            let head = harness.fetch("http://us%65r:p%3Ass@127.0.0.1:\(server.port)/x").text ?? ""
            #expect(head.hasPrefix("GET /x HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n"))
            #expect(head.contains("Authorization: Basic \(Data("user:p:ss".utf8).base64EncodedString())\r\n"))
            #expect(!head.contains("@"))
        }

        @Test func aRedirectToAnotherOriginGetsNoCredentials() throws {
            let other = try echoServer()
            defer { other.stop() }
            let redirector = try ScriptedServer { connection in
                try connection.serveKeepAlive { request in
                    if request.target == "/same" {
                        return ScriptedResponse.text("", status: 302, reason: "Found", headers: [("Location", "/echo")])
                    }
                    if request.target == "/echo" { return ScriptedResponse.text(request.head) }
                    return ScriptedResponse.text("", status: 302, reason: "Found",
                                                 headers: [("Location", "http://127.0.0.1:\(other.port)/")])
                }
            }
            defer { redirector.stop() }
            let harness = ClientHarness()
            defer { harness.finish() }
            let crossed = harness.fetch("http://user:pass@127.0.0.1:\(redirector.port)/away")
            #expect(crossed.status == 200)
            #expect(!(crossed.text ?? "authorization").lowercased().contains("authorization"))
            let same = harness.fetch("http://user:pass@127.0.0.1:\(redirector.port)/same").text ?? ""
            #expect(same.contains("Authorization: Basic \(Data("user:pass".utf8).base64EncodedString())\r\n"))
        }
    }
}
