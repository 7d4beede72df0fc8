import Foundation
import LoopbackDNSServer
import Testing
@testable import UVNetworking

extension EndToEnd {
    /// A session's tasks through the c-ares resolver and the scripted DNS server (`dnsServers`):
    /// names resolve, fail with `dnsFailure` or `dnsTimeout`, and the session ends with nothing
    /// of the resolver left on the loop.
    @Suite(.serialized) struct DNSSession {
        @Test func tasksResolveThroughTheConfiguredServersAndFailWithDistinctCodes() throws {
            let dns = try LoopbackDNSServer()
            defer { dns.stop() }
            let server = try ScriptedServer { connection in
                try connection.serveKeepAlive { _ in ScriptedResponse.text("found") }
            }
            defer { server.stop() }
            dns.set("web.test", .init(addresses: ["127.0.0.1"]))
            dns.set("gone.test", .init(behavior: .nameError))
            dns.set("mute.test", .init(behavior: .silent))
            let harness = ClientHarness { configuration in
                configuration.dnsServers = ["127.0.0.1:\(dns.port)"]
                configuration.dnsTimeout = 0.3
            }
            #expect(harness.fetch("http://web.test:\(server.port)/").text == "found")
            let gone = harness.fetch("http://gone.test:\(server.port)/")
            #expect(gone.code == .dnsFailure)
            #expect((gone.error as? NetworkingError)?.kind == .transport)
            let mute = harness.fetch("http://mute.test:\(server.port)/")
            #expect(mute.code == .dnsTimeout)
            #expect((mute.error as? NetworkingError)?.isTimeout == true)
            // "No such name" is kept a short while: the second task asks nobody.
            let asked = dns.queryCount(for: "gone.test")
            #expect(harness.fetch("http://gone.test:\(server.port)/").code == .dnsFailure)
            #expect(dns.queryCount(for: "gone.test") == asked)
            harness.finish()
        }
    }
}
