import Dispatch
import Foundation
import LoopbackHTTPServer
import Synchronization
import Testing
import UVHTTP1
@_spi(Testing) @testable import UVNetworking

extension EndToEnd {
    /// A connector's and a connection's transports hold them strongly until they close, and
    /// pending callbacks (DNS, the trust verdict, after-I/O work) hold them until they run: a
    /// weak delegate would give them a side table, which makes every retain and release slow.
    /// Cancelled at each point of its opening, with callbacks still to come, a connector never
    /// reports, and it, its transports and the connection are freed once those callbacks ran.
    @Suite(.tags(.loopback)) struct TransportLifetimeTests {
        /// A pool's part, on the loop: keeps the connection until it reports its end, as a pool
        /// does, and records what it was told.
        final class Owner: TransportConnectorDelegate, HTTP1ConnectionOwner, @unchecked Sendable {
            // @unchecked: touched only on the loop thread.
            var connector: TransportConnector?
            var connection: HTTP1Connection?
            var watch: Watch?
            var events: [String] = []
            /// Closes the connection and lets it go as soon as it is established.
            var closesWhenReady = false

            func connector(_ connector: TransportConnector, established transport: StreamTransport, applicationProtocol: String?) {
                self.connector = nil
                events.append("ready")
                let connection = HTTP1Connection(id: connector.id, loop: EventLoop.shared, owner: self, transport: transport,
                                                 timings: connector.timings, decoderLimits: ResponseParser.Options.client())
                watch?.connection = connection
                self.connection = connection
                connection.start()
                if closesWhenReady {
                    connection.close()
                    self.connection = nil
                }
            }

            func connector(_ connector: TransportConnector, failed failure: ConnectFailure) {
                events.append("failed to connect")
                self.connector = nil
            }

            func connectionReleased(_ connection: HTTP1Connection) { events.append("released") }

            func connectionMayPipeline(_ connection: HTTP1Connection) {}
            func connectionStopsPipelining(_ connection: HTTP1Connection) {}
            func connectionMisbehavedWhilePipelining(_ connection: HTTP1Connection) {}

            func connectionClosed(_ connection: HTTP1Connection) {
                events.append("closed")
                self.connection = nil
            }

            /// Cancels the connector or closes the connection and lets it go, as a pool's
            /// `closeAll` does.
            func drop() {
                connector?.cancel()
                connector = nil
                connection?.close()
                connection = nil
            }
        }

        /// Weak references to what must be freed, read on the loop.
        final class Watch: @unchecked Sendable {
            // @unchecked: touched only on the loop thread.
            weak var connector: TransportConnector?
            weak var connection: HTTP1Connection?
            weak var tls: TLSTransport?
            var isFreed: Bool { connector == nil && connection == nil && tls == nil }
        }

        /// A trust verdict the test gives (or never gives) itself.
        fileprivate final class PendingVerdict: @unchecked Sendable {
            // @unchecked: behind the mutex.
            let verdict = Mutex<UncheckedBox<(TrustVerdict) -> Void>?>(nil)
            let asked = DispatchSemaphore(value: 0)
        }

        private let loop = EventLoop.shared

        /// Runs `body` on the loop and waits for it.
        private func onLoop<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T {
            let result = Mutex<T?>(nil)
            let done = DispatchSemaphore(value: 0)
            _ = loop.execute {
                result.withLock { $0 = body() }
                done.signal()
            }
            done.wait()
            return result.withLock { $0! }
        }

        /// Makes and starts a connection on the loop (`then` runs right after `start`, in the
        /// same loop turn).
        private func open(host: String, port: Int, tls: TLSRoute? = nil, overrides: [String: String] = [:], owner: Owner, watch: Watch,
                          then: @escaping @Sendable () -> Void = {}) {
            let loop = self.loop
            let route = UncheckedBox(tls)
            onLoop {
                let connector = TransportConnector(id: 1, loop: loop, delegate: owner, host: host, port: port, tls: route.value, tunnel: nil,
                                                   resolver: DNSResolver(loop: loop, ttlMilliseconds: 0, overrides: overrides), connectTimeout: 5)
                owner.connector = connector
                owner.watch = watch
                watch.connector = connector
                connector.start()
                then()
            }
        }

        /// A TLS route for `localhost` whose trust evaluation waits for the test.
        private func tlsRoute(_ pending: PendingVerdict) throws -> TLSRoute {
            var configuration = TLSConfiguration()
            configuration.trustsSystemCAs = false
            configuration.additionalTrustedCAFiles = [TestPKI.standard.rootPEMPath]
            return TLSRoute(context: try TLSContext(configuration: configuration), host: "localhost", sessions: TLSSessionCache()) { _, verdict in
                let box = UncheckedBox(verdict)
                pending.verdict.withLock { $0 = box }
                pending.asked.signal()
            }
        }

        /// Waits until the connection and its TLS transport are freed and the loop's handles are
        /// back at `baseline`.
        private func expectFreed(_ watch: Watch, baseline: Int, sourceLocation: SourceLocation = #_sourceLocation) {
            let freed = waitUntil(timeout: 5) { onLoop { watch.isFreed } }
            #expect(freed, "the connection or its transport outlived its close", sourceLocation: sourceLocation)
            let closed = waitUntil(timeout: 5) { loop.openHandleCountFromOutside() == baseline }
            #expect(closed, "loop handles left open", sourceLocation: sourceLocation)
        }

        /// A server that accepts and waits for the client to go.
        private func silentServer(onAccept: @escaping @Sendable () -> Void = {}) throws -> ScriptedServer {
            try ScriptedServer { connection in
                onAccept()
                _ = connection.waitForPeerClose()
            }
        }

        @Test func closedWhileResolvingIsFreedOnceTheAnswerComes() throws {
            let baseline = loop.openHandleCountFromOutside()
            let owner = Owner(), watch = Watch()
            // A name, not an IP literal: the look-up runs on libuv's threadpool and answers later.
            open(host: "localhost", port: 1, owner: owner, watch: watch) { owner.drop() }
            expectFreed(watch, baseline: baseline)
            #expect(onLoop { owner.events } == [])
        }

        @Test func closedWhileConnectingIsNeverToldOfTheConnect() throws {
            let server = try silentServer()
            defer { server.stop() }
            let baseline = loop.openHandleCountFromOutside()
            let owner = Owner(), watch = Watch()
            open(host: "127.0.0.1", port: server.port, owner: owner, watch: watch) { owner.drop() }
            expectFreed(watch, baseline: baseline)
            #expect(onLoop { owner.events } == [])
        }

        @Test func closedFromInsideItsReadyCallbackIsFreed() throws {
            let server = try silentServer()
            defer { server.stop() }
            let baseline = loop.openHandleCountFromOutside()
            let owner = Owner(), watch = Watch()
            owner.closesWhenReady = true
            open(host: "127.0.0.1", port: server.port, owner: owner, watch: watch)
            expectFreed(watch, baseline: baseline)
            #expect(onLoop { owner.events } == ["ready", "closed"])
        }

        @Test func closedByTheServerWhileIdleIsFreed() throws {
            let server = try ScriptedServer { connection in connection.close() }
            defer { server.stop() }
            let baseline = loop.openHandleCountFromOutside()
            let owner = Owner(), watch = Watch()
            open(host: "127.0.0.1", port: server.port, owner: owner, watch: watch)
            expectFreed(watch, baseline: baseline)
            #expect(onLoop { owner.events } == ["ready", "closed"])
        }

        /// Closed while two addresses race (both hang): the race's attempts and its timer close,
        /// and nothing holds the connection any more.
        @Test func closedMidRaceIsFreed() throws {
            let v4 = try BlackholeListener()
            defer { v4.close() }
            let v6 = try BlackholeListener(ipv6: true, port: v4.port)
            defer { v6.close() }
            let baseline = loop.openHandleCountFromOutside()
            let descriptors = openFileDescriptorCount()
            let owner = Owner(), watch = Watch()
            open(host: "race.test", port: v4.port, overrides: ["race.test": "::1, 127.0.0.1"], owner: owner, watch: watch)
            // The second attempt starts after the attempt delay: two sockets connecting.
            #expect(waitUntil(timeout: 5) { openFileDescriptorCount() >= descriptors + 2 })
            onLoop { owner.drop() }
            expectFreed(watch, baseline: baseline)
            #expect(waitUntil(timeout: 5) { openFileDescriptorCount() <= descriptors })
            #expect(onLoop { owner.events } == [])
        }

        @Test func closedInTheTLSHandshakeIsFreed() throws {
            let helloArrived = DispatchSemaphore(value: 0)
            let server = try ScriptedServer { connection in
                _ = try? connection.readBytes(5, timeout: 5)
                helloArrived.signal()
                _ = connection.waitForPeerClose()
            }
            defer { server.stop() }
            let baseline = loop.openHandleCountFromOutside()
            let owner = Owner(), watch = Watch(), pending = PendingVerdict()
            open(host: "127.0.0.1", port: server.port, tls: try tlsRoute(pending), owner: owner, watch: watch)
            #expect(helloArrived.wait(timeout: .now() + 5) == .success)
            // TLS is layered over TCP once it connected.
            #expect(onLoop { watch.tls = owner.connector?.tlsTransport; return watch.tls != nil })
            onLoop { owner.drop() }
            expectFreed(watch, baseline: baseline)
            #expect(onLoop { owner.events } == [])
        }

        @Test func closedWhileItsServerIsEvaluatedIgnoresTheLateVerdictAndIsFreed() throws {
            let pki = TestPKI.standard
            let server = try ScriptedServer { connection in
                let tls = try ScriptedTLS(connection, chain: pki.sentChain, key: pki.leaf.key)
                // Never completes: the client waits for its verdict, then goes.
                try? tls.handshake()
                _ = connection.waitForPeerClose()
            }
            defer { server.stop() }
            let baseline = loop.openHandleCountFromOutside()
            let owner = Owner(), watch = Watch(), pending = PendingVerdict()
            open(host: "127.0.0.1", port: server.port, tls: try tlsRoute(pending), owner: owner, watch: watch)
            #expect(pending.asked.wait(timeout: .now() + 5) == .success)
            #expect(onLoop { watch.tls = owner.connector?.tlsTransport; return watch.tls != nil })
            onLoop { owner.drop() }
            // The verdict comes after the close: ignored, and then nothing holds the transport.
            do {
                let verdict = pending.verdict.withLock { verdict in
                    defer { verdict = nil }
                    return verdict
                }
                onLoop { verdict?.value(.trusted(verifiedChain: [])) }
            }
            expectFreed(watch, baseline: baseline)
            #expect(onLoop { owner.events } == [])
        }
    }
}

/// Carries a value that is only used on the loop thread across a @Sendable boundary.
fileprivate struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
