import CUV
import Dispatch
import Foundation
import LoopbackHTTPServer
import Synchronization
import Testing
@_spi(Testing) @testable import UVNetworking

extension EndToEnd {
    /// The race's shell on real loopback sockets: ::1 refusing, blackholing or serving beside a
    /// server on 127.0.0.1 at the same port.
    @Suite(.tags(.loopback)) struct ConnectionRaceTests {
        /// Records the race's one report, on the loop.
        final class Recorder: ConnectionRaceDelegate, @unchecked Sendable {
            // @unchecked: written on the loop before `done` is signalled, read after.
            var winner: TCPTransport?
            var address: SocketAddress?
            var status: Int32?
            var reports = 0
            let done = DispatchSemaphore(value: 0)

            func race(_ race: ConnectionRace, won transport: TCPTransport, to address: SocketAddress) {
                reports += 1
                winner = transport
                self.address = address
                done.signal()
            }

            func race(_ race: ConnectionRace, failedWith status: Int32) {
                reports += 1
                self.status = status
                done.signal()
            }
        }

        private let loop = EventLoop.shared

        private func onLoop(_ body: @escaping @Sendable () -> Void) {
            let done = DispatchSemaphore(value: 0)
            _ = loop.execute {
                body()
                done.signal()
            }
            done.wait()
        }

        /// Starts a race to ::1 and 127.0.0.1 at `port` and keeps it until it reports.
        private func race(port: Int, delayMilliseconds: UInt64, recorder: Recorder) {
            let loop = self.loop
            onLoop {
                let addresses = ["127.0.0.1", "::1"].map { SocketAddress(numericHost: $0, port: port)! }
                let race = ConnectionRace(loop: loop, addresses: addresses, first: TCPTransport(loop: loop), delegate: recorder,
                                          delayMilliseconds: delayMilliseconds)
                race.start()
            }
        }

        /// Closes the winner and checks that every handle the race opened is closed.
        private func finish(_ recorder: Recorder, baseline: Int, sourceLocation: SourceLocation = #_sourceLocation) {
            onLoop {
                recorder.winner?.close(reset: false)
                recorder.winner = nil
            }
            #expect(waitUntil(timeout: 5) { loop.openHandleCountFromOutside() == baseline }, "loop handles left open",
                    sourceLocation: sourceLocation)
            #expect(recorder.reports == 1, sourceLocation: sourceLocation)
        }

        private func server(ipv6: Bool = false, port: Int = 0) throws -> ScriptedServer {
            try ScriptedServer(ipv6: ipv6, port: port) { connection in _ = connection.waitForPeerClose() }
        }

        @Test func aRefusalStartsTheNextAddressWithoutWaitingForTheDelay() throws {
            let v4 = try server()
            defer { v4.stop() }
            let baseline = loop.openHandleCountFromOutside()
            let recorder = Recorder()
            // A minute's delay: only the refusal of ::1 can start 127.0.0.1 in time.
            race(port: v4.port, delayMilliseconds: 60_000, recorder: recorder)
            #expect(recorder.done.wait(timeout: .now() + 10) == .success)
            #expect(recorder.address?.ipAddress == "127.0.0.1")
            finish(recorder, baseline: baseline)
        }

        @Test func aHangingAddressLosesToTheNextOneAndIsClosed() throws {
            let v4 = try server()
            defer { v4.stop() }
            let blackhole = try BlackholeListener(ipv6: true, port: v4.port)
            defer { blackhole.close() }
            let baseline = loop.openHandleCountFromOutside()
            let recorder = Recorder()
            race(port: v4.port, delayMilliseconds: 50, recorder: recorder)
            #expect(recorder.done.wait(timeout: .now() + 10) == .success)
            #expect(recorder.address?.ipAddress == "127.0.0.1")
            // The hanging attempt to ::1 and the delay timer are closed: only the winner is left.
            finish(recorder, baseline: baseline)
        }

        @Test func ipv6IsTriedFirst() throws {
            let v4 = try server()
            defer { v4.stop() }
            let v6 = try server(ipv6: true, port: v4.port)
            defer { v6.stop() }
            let baseline = loop.openHandleCountFromOutside()
            let recorder = Recorder()
            race(port: v4.port, delayMilliseconds: 60_000, recorder: recorder)
            #expect(recorder.done.wait(timeout: .now() + 10) == .success)
            #expect(recorder.address?.ipAddress == "::1")
            finish(recorder, baseline: baseline)
            #expect(v4.acceptedCount == 0)
        }

        @Test func whenEveryAddressRefusesTheLastRefusalIsReported() throws {
            let port = try server().port  // stopped at once by deinit: nothing listens now
            let baseline = loop.openHandleCountFromOutside()
            let recorder = Recorder()
            race(port: port, delayMilliseconds: 60_000, recorder: recorder)
            #expect(recorder.done.wait(timeout: .now() + 10) == .success)
            #expect(recorder.status == UV_ECONNREFUSED.rawValue)
            finish(recorder, baseline: baseline)
        }
    }
}
