import Foundation
import Glibc
import LoopbackHTTPServer
import Testing
@testable import UVNetworking

extension EndToEnd {
    /// Each timeout is its own error; cancellation at each phase completes once.
    @Suite(.tags(.nginx)) struct TimeoutsAndCancellation {
        /// Reads each request and never answers; waits for the client to give up.
        private func silentServer() throws -> ScriptedServer {
            try ScriptedServer { connection in
                _ = try connection.readRequest()
                _ = connection.waitForPeerClose(timeout: 10)
            }
        }

        @Test func connectionRefused() throws {
            let harness = ClientHarness()
            let port = try ScriptedServer { _ in }.port  // stopped at once by deinit: nothing listens now
            let outcome = harness.fetch("http://127.0.0.1:\(port)/")
            #expect(outcome.code == .connectionRefused)
            #expect((outcome.error as? NetworkingError)?.failingURL?.absoluteString == "http://127.0.0.1:\(port)/")
            harness.finish()
        }

        @Test func connectTimeout() throws {
            let harness = ClientHarness { $0.connectTimeout = 0.3 }
            let blackhole = try BlackholeListener()
            let started = monotonicSeconds()
            let outcome = harness.fetch("http://127.0.0.1:\(blackhole.port)/")
            #expect(outcome.code == .connectTimeout)
            #expect(monotonicSeconds() - started < 5)
            blackhole.close()
            harness.finish()
        }

        @Test func responseHeadTimeout() throws {
            let harness = ClientHarness { $0.responseHeadTimeout = 0.3 }
            let server = try silentServer()
            #expect(harness.fetch("http://127.0.0.1:\(server.port)/").code == .responseHeadTimeout)
            server.stop()
            harness.finish()
        }

        @Test func idleTimeoutBetweenBodyBytes() throws {
            let harness = ClientHarness { $0.idleTimeout = 0.3 }
            let server = try ScriptedServer { connection in
                _ = try connection.readRequest()
                try connection.write("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")
                _ = connection.waitForPeerClose(timeout: 10)
            }
            let outcome = harness.fetch("http://127.0.0.1:\(server.port)/")
            #expect(outcome.code == .idleTimeout)
            #expect(outcome.status == 200)
            server.stop()
            harness.finish()
        }

        @Test func wholeRequestTimeoutWhileBytesKeepTrickling() throws {
            let harness = ClientHarness { $0.idleTimeout = 0.3 }
            let server = try ScriptedServer { connection in
                _ = try connection.readRequest()
                try connection.write("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")
                for _ in 0..<100 {
                    try connection.write("x")
                    connection.pause(0.05)
                }
            }
            var request = ClientHarness.request("http://127.0.0.1:\(server.port)/")
            request.totalTimeoutInterval = 0.6
            let outcome = harness.fetch(request)
            #expect(outcome.code == .requestTimeout)
            #expect("\(outcome.error!)".contains("totalTimeoutInterval (0.6 s)"))
            server.stop()
            harness.finish()
        }

        @Test func requestTimeoutWhileWaitingForAConnection() throws {
            let harness = ClientHarness { $0.connectTimeout = 30 }
            let blackhole = try BlackholeListener()
            #expect(harness.fetch("http://127.0.0.1:\(blackhole.port)/", timeout: 0.3).code == .requestTimeout)
            blackhole.close()
            harness.finish()
        }

        @Test func cancelBeforeResume() throws {
            let harness = ClientHarness()
            let server = try ScriptedServer { _ in }
            let (task, wait) = harness.makeTask(ClientHarness.request("http://127.0.0.1:\(server.port)/"))
            task.cancel()
            let outcome = wait(5)
            #expect(outcome?.code == .cancelled)
            #expect(outcome?.calls == 1)
            #expect(task.state == .completed)
            task.resume()
            #expect(server.acceptedCount == 0)
            server.stop()
            harness.finish()
        }

        @Test func cancelWhileConnecting() throws {
            let harness = ClientHarness { $0.connectTimeout = 30 }
            let blackhole = try BlackholeListener()
            let (task, wait) = harness.makeTask(ClientHarness.request("http://127.0.0.1:\(blackhole.port)/"))
            task.resume()
            Thread.sleep(forTimeInterval: 0.1)
            task.cancel()
            #expect(wait(5)?.code == .cancelled)
            blackhole.close()
            harness.finish()
        }

        @Test func cancelMidBodyClosesTheConnection() throws {
            let harness = ClientHarness()
            let serverSawClose = DispatchSemaphore(value: 0)
            let server = try ScriptedServer { connection in
                _ = try connection.readRequest()
                try connection.write("HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n" + String(repeating: "x", count: 5000))
                if connection.waitForPeerClose(timeout: 10) { serverSawClose.signal() }
            }
            let (task, wait) = harness.makeTask(ClientHarness.request("http://127.0.0.1:\(server.port)/"))
            task.resume()
            #expect(waitUntil(timeout: 5) { task.countOfBytesReceived >= 5000 })
            task.cancel()
            let outcome = wait(5)
            #expect(outcome?.code == .cancelled)
            #expect(outcome?.calls == 1)
            #expect(serverSawClose.wait(timeout: .now() + 5) == .success)
            server.stop()
            harness.finish()
        }

        @Test func cancellingTheProgressCancelsTheTask() throws {
            let harness = ClientHarness()
            let server = try silentServer()
            let (task, wait) = harness.makeTask(ClientHarness.request("http://127.0.0.1:\(server.port)/"))
            task.resume()
            #expect(waitUntil(timeout: 5) { server.acceptedCount == 1 })
            task.downloadProgress.cancel()
            #expect(wait(5)?.code == .cancelled)
            server.stop()
            harness.finish()
        }

        @Test func resetSessionLeavesTheManagerUsable() throws {
            let nginx = try TestServers.nginx()
            let harness = ClientHarness()
            #expect(harness.fetch(nginx.baseURL + "/hello").status == 200)
            harness.manager.invalidateSessionCancelingTasks(true, resetSession: true)
            #expect(harness.fetch(nginx.baseURL + "/hello").status == 200)
            harness.finish()
        }

        @Test func suspendPausesReadingAndResumeFinishes() throws {
            let harness = ClientHarness()
            let server = try ScriptedServer { connection in
                _ = try connection.readRequest()
                try connection.write("HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nabc")
                connection.pause(0.3)
                try connection.write("def")
                _ = connection.waitForPeerClose(timeout: 10)
            }
            let (task, wait) = harness.makeTask(ClientHarness.request("http://127.0.0.1:\(server.port)/"))
            task.resume()
            #expect(waitUntil(timeout: 5) { task.countOfBytesReceived == 3 })
            task.suspend()
            #expect(task.state == .suspended)
            Thread.sleep(forTimeInterval: 0.6)
            #expect(task.countOfBytesReceived == 3, "no byte is read while suspended")
            task.resume()
            #expect(wait(5)?.text == "abcdef")
            server.stop()
            harness.finish()
        }

        @Test func invalidatingCancelsRunningTasksAndFailsLaterOnes() throws {
            let harness = ClientHarness()
            let server = try silentServer()
            let (task, wait) = harness.makeTask(ClientHarness.request("http://127.0.0.1:\(server.port)/"))
            task.resume()
            #expect(waitUntil(timeout: 5) { server.acceptedCount == 1 })
            harness.manager.invalidateSessionCancelingTasks(true, resetSession: false)
            #expect(wait(5)?.code == .cancelled)
            let later = harness.fetch("http://127.0.0.1:\(server.port)/")
            #expect(later.code == .sessionInvalidated)
            server.stop()
            harness.finish()
        }
    }
}
