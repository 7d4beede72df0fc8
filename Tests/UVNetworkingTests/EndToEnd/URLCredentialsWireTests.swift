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

        @Test func httpbinAcceptsTheURLsCredentials() throws {
            let httpbin = try TestServers.httpbin()
            let harness = ClientHarness()
            defer { harness.finish() }
            let base = httpbin.baseURL.replacingOccurrences(of: "http://", with: "")
            #expect(harness.fetch("http://user:pass@\(base)/basic-auth/user/pass").status == 200)
            #expect(harness.fetch("http://user:wrong@\(base)/basic-auth/user/pass").status == 401)
            // Escaped in the URL, decoded on the wire: "p@ss word".
            #expect(harness.fetch("http://user:p%40ss%20word@\(base)/basic-auth/user/p@ss%20word").status == 200)
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
