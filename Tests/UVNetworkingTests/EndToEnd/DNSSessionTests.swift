import Foundation
import LoopbackDNSServer
import Testing
@testable import UVNetworking

extension EndToEnd {
    /// A session's tasks through the c-ares resolver and the scripted DNS server (`dnsServers`):
    /// names resolve, fail with `dnsFailure` or `dnsTimeout`, and the session ends with nothing
    /// of the resolver left on the loop.
    @Suite(.tags(.loopback), .serialized) struct DNSSession {
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
    
        /// An invalid `dnsServers` entry fails only the names that need DNS: an overridden name
        /// still connects.
        @Test func anInvalidServerEntryLeavesOverriddenNamesAnswered() throws {
            let server = try ScriptedServer { connection in
                try connection.serveKeepAlive { _ in ScriptedResponse.text("found") }
            }
            defer { server.stop() }
            let harness = ClientHarness { configuration in
                configuration.dnsServers = ["dns.test"]
                configuration.hostAddressOverrides = ["pinned.test": "127.0.0.1"]
            }
            #expect(harness.fetch("http://pinned.test:\(server.port)/").text == "found")
            let other = harness.fetch("http://other.test:\(server.port)/")
            #expect(other.code == .dnsFailure)
            #expect((other.error as? NetworkingError)?.localizedDescription.contains("\"dns.test\"") == true)
            #expect(harness.fetch("http://pinned.test:\(server.port)/").text == "found")
            harness.finish()
        }

        /// Tasks waiting on answers that never come, ended by invalidation: each completes once
        /// (cancelled), and the resolver's sockets, poll handles and timers are all closed.
        @Test func invalidatingWhileLookUpsArePendingLeavesNothingOpen() throws {
            let dns = try LoopbackDNSServer()
            defer { dns.stop() }
            let harness = ClientHarness { configuration in
                configuration.dnsServers = ["127.0.0.1:\(dns.port)"]
                configuration.dnsTimeout = .infinity
            }
            for index in 0..<20 { dns.set("slow\(index).test", .init(addresses: ["127.0.0.1"], delay: 30)) }
            let tasks = (0..<20).map { harness.makeTask(ClientHarness.request("http://slow\($0).test:1/")) }
            for (task, _) in tasks { task.resume() }
            #expect(waitUntil(timeout: 10) { dns.totalQueries >= 40 })
            harness.finish()
            for (_, wait) in tasks {
                let outcome = wait(5)
                #expect(outcome?.code == .cancelled)
                #expect(outcome?.calls == 1)
            }
        }
    }
}
