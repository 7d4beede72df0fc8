import Dispatch
import Foundation
import Synchronization
import Testing
@testable import UVNetworking

/// How a scripted redirect frames its body.
enum RedirectBodyFraming: String, CaseIterable, Sendable {
    case contentLength, chunked, untilClose
}

/// The kind of task a redirect body test runs.
enum RedirectBodyTaskKind: String, CaseIterable, Sendable {
    case data, discarded, download
}

/// A loopback server whose `/big` answers a 302 to `/final` with a body of `size` bytes made on
/// the fly (never held), framed as asked, and whose `/final` answers `done`. It samples the
/// process's resident memory as it writes, so the peak while the redirect's body flows is known.
final class BigRedirectServer: Sendable {
    static let finalBody = "done"
    /// What the server saw while writing.
    final class Tally: Sendable {
        /// The highest resident size seen while writing the redirect's body.
        let peakResident = Mutex(0)
        /// Redirect body bytes the server managed to write (into the kernel).
        let written = Atomic<Int>(0)
    }

    let server: ScriptedServer
    let tally = Tally()

    init(size: Int, framing: RedirectBodyFraming, keepOpenAfterBody: Bool = false) throws {
        let tally = self.tally
        server = try ScriptedServer { connection in
            while true {
                let request = try connection.readRequest(timeout: 30)
                guard request.target == "/big" else {
                    try connection.write(ScriptedResponse.text(Self.finalBody))
                    continue
                }
                var head = "HTTP/1.1 302 Found\r\nLocation: /final\r\n"
                switch framing {
                case .contentLength: head += "Content-Length: \(size)\r\n"
                case .chunked: head += "Transfer-Encoding: chunked\r\n"
                case .untilClose: break  // no length, not chunked: the end of the connection ends it
                }
                try connection.write(head + "\r\n")
                let chunk = [UInt8](repeating: UInt8(ascii: "x"), count: min(size, 1 << 20))
                var sent = 0
                while sent < size {
                    let count = min(chunk.count, size - sent)
                    let piece = count == chunk.count ? chunk : Array(chunk[0..<count])
                    if framing == .chunked {
                        try connection.write(String(count, radix: 16) + "\r\n")
                        try connection.write(piece)
                        try connection.write("\r\n")
                    } else {
                        try connection.write(piece)
                    }
                    sent += count
                    tally.written.store(sent, ordering: .relaxed)
                    let resident = residentMemoryBytes()
                    tally.peakResident.withLock { $0 = max($0, resident) }
                }
                if framing == .chunked { try connection.write("0\r\n\r\n") }
                if keepOpenAfterBody {
                    // A close-delimited body that never ends: the client must not wait for it.
                    _ = connection.waitForPeerClose(timeout: 30)
                    return
                }
                if framing == .untilClose { return }
            }
        }
    }

    var baseURL: String { "http://127.0.0.1:\(server.port)" }

    func stop() { server.stop() }
}

extension EndToEnd {
    /// A redirect's own body: dropped as it arrives (bounded memory, never the task's body), or
    /// the connection closed and the redirect followed at once when reading it would cost more
    /// than a new connection.
    @Suite(.tags(.loopback)) struct RedirectBodies {
        /// Runs a task of `kind` for `url`; returns its status, its body as the caller got it
        /// (the data, or the downloaded file's bytes), and the bytes it counted as received and
        /// discarded.
        private func run(_ kind: RedirectBodyTaskKind, _ url: String, in harness: ClientHarness,
                         timeout: TimeInterval = 120) throws -> (status: Int?, body: Data?, received: Int64, discarded: Int64, error: NetworkingError.Code?) {
            let request = ClientHarness.request(url, timeout: timeout)
            switch kind {
            case .data, .discarded:
                let (task, wait) = harness.makeTask(request)
                task.discardsResponseBody = kind == .discarded
                task.resume()
                let outcome = try #require(wait(timeout + 10))
                return (outcome.status, outcome.data, task.countOfBytesReceived, task.countOfBytesDiscarded, outcome.code)
            case .download:
                let probe = DownloadProbe()
                let task = harness.manager.downloadTask(with: request, completionHandler: probe.completion)
                task.resume()
                let outcome = try #require(probe.wait(timeout + 10))
                return (outcome.status, outcome.contents, task.countOfBytesReceived, 0, outcome.code)
            }
        }

        /// Only the final response's body is the task's, and only it is counted.
        private func expectFinalBody(_ outcome: (status: Int?, body: Data?, received: Int64, discarded: Int64, error: NetworkingError.Code?),
                                     _ kind: RedirectBodyTaskKind, sourceLocation: SourceLocation = #_sourceLocation) {
            let final = Data(BigRedirectServer.finalBody.utf8)
            #expect(outcome.body == (kind == .discarded ? Data() : final), sourceLocation: sourceLocation)
            #expect(outcome.received == Int64(final.count), sourceLocation: sourceLocation)
            if kind == .discarded { #expect(outcome.discarded == Int64(final.count), sourceLocation: sourceLocation) }
        }

        /// A 2 GiB 302 body, made on the fly by the server: whatever its framing and the task's
        /// kind, the redirect is followed without the body being held, and only the final body
        /// is the task's.
        @Test(arguments: RedirectBodyFraming.allCases, RedirectBodyTaskKind.allCases)
        func aTwoGiBRedirectBodyIsNeverHeld(framing: RedirectBodyFraming, kind: RedirectBodyTaskKind) throws {
            let server = try BigRedirectServer(size: 2 << 30, framing: framing)
            defer { server.stop() }
            let harness = ClientHarness()
            defer { harness.finish() }
            let before = residentMemoryBytes()
            server.tally.peakResident.withLock { $0 = before }
            let started = monotonicSeconds()
            let outcome = try run(kind, server.baseURL + "/big", in: harness)
            let seconds = monotonicSeconds() - started
            let growth = max(server.tally.peakResident.withLock { $0 }, residentMemoryBytes()) - before
            #expect(outcome.error == nil)
            #expect(outcome.status == 200)
            expectFinalBody(outcome, kind)
            #expect(growth < 64 << 20, "resident memory grew by \(growth >> 20) MiB while a 2 GiB redirect body flowed")
            // Not read to its end: the connection was closed and the redirect followed at once.
            #expect(server.tally.written.load(ordering: .relaxed) < 1 << 30, "\(server.tally.written.load(ordering: .relaxed)) bytes of the redirect's body were read")
            print("2 GiB \(framing) redirect body, \(kind) task: \(String(format: "%.2f", seconds)) s, resident growth \(growth >> 20) MiB")
        }

        /// `bytes(for:)`: the stream starts with the final response, never the redirect's body.
        @Test(arguments: RedirectBodyFraming.allCases)
        func aStreamGetsOnlyTheFinalBody(framing: RedirectBodyFraming) async throws {
            let server = try BigRedirectServer(size: 2 << 30, framing: framing)
            defer { server.stop() }
            let harness = ClientHarness()
            defer { harness.finish() }
            let (response, stream) = try await harness.manager.bytes(for: ClientHarness.request(server.baseURL + "/big"))
            #expect(response.status.code == 200)
            var body: [UInt8] = []
            for try await chunk in stream { body += chunk }
            #expect(body == Array(BigRedirectServer.finalBody.utf8))
        }

        /// A redirect whose body only the end of the connection ends, from a server that keeps
        /// the connection open: the redirect is followed at once, not after the timeout.
        @Test(arguments: RedirectBodyTaskKind.allCases)
        func aCloseDelimitedRedirectBodyOnAConnectionKeptOpenIsNotWaitedFor(kind: RedirectBodyTaskKind) throws {
            let server = try BigRedirectServer(size: 1000, framing: .untilClose, keepOpenAfterBody: true)
            defer { server.stop() }
            let harness = ClientHarness()
            defer { harness.finish() }
            let started = monotonicSeconds()
            let outcome = try run(kind, server.baseURL + "/big", in: harness, timeout: 10)
            let seconds = monotonicSeconds() - started
            #expect(outcome.error == nil)
            #expect(outcome.status == 200)
            expectFinalBody(outcome, kind)
            #expect(seconds < 3, "the redirect took \(seconds) s")
        }

        /// A small body (within 64 KiB) is read and dropped, so the connection carries the next
        /// request; it is not the task's body.
        @Test(arguments: [RedirectBodyFraming.contentLength, .chunked], RedirectBodyTaskKind.allCases)
        func aSmallRedirectBodyIsDrainedAndTheConnectionReused(framing: RedirectBodyFraming, kind: RedirectBodyTaskKind) throws {
            let server = try BigRedirectServer(size: 40_000, framing: framing)
            defer { server.stop() }
            let harness = ClientHarness()
            defer { harness.finish() }
            let outcome = try run(kind, server.baseURL + "/big", in: harness, timeout: 10)
            #expect(outcome.error == nil)
            #expect(outcome.status == 200)
            expectFinalBody(outcome, kind)
            #expect(server.server.acceptedCount == 1, "the drained connection was not reused")
        }

        /// A followed redirect whose body the server cuts short (a close, a reset) is followed
        /// all the same: its body was to be dropped.
        @Test(arguments: [false, true])
        func aRedirectBodyCutShortIsFollowedAllTheSame(reset: Bool) throws {
            let server = try ScriptedServer { connection in
                let request = try connection.readRequest()
                guard request.target == "/cut" else {
                    try connection.write(ScriptedResponse.text(BigRedirectServer.finalBody))
                    _ = connection.waitForPeerClose(timeout: 10)
                    return
                }
                try connection.write("HTTP/1.1 302 Found\r\nLocation: /final\r\nContent-Length: 1000\r\n\r\n")
                try connection.write([UInt8](repeating: 1, count: 10))
                connection.pause(0.1)
                if reset { connection.reset() } else { connection.close() }
            }
            defer { server.stop() }
            let harness = ClientHarness()
            defer { harness.finish() }
            let outcome = harness.fetch("http://127.0.0.1:\(server.port)/cut")
            #expect(outcome.error == nil)
            #expect(outcome.status == 200)
            #expect(outcome.text == BigRedirectServer.finalBody)
        }

        /// A redirect the hook declines is the task's response, its body delivered whole, however
        /// it is framed and whatever the task keeps it in.
        @Test(arguments: RedirectBodyFraming.allCases, RedirectBodyTaskKind.allCases)
        func aDeclinedRedirectDeliversItsBody(framing: RedirectBodyFraming, kind: RedirectBodyTaskKind) throws {
            let size = 300_000
            let server = try BigRedirectServer(size: size, framing: framing)
            defer { server.stop() }
            let harness = ClientHarness()
            defer { harness.finish() }
            harness.manager.taskWillPerformHTTPRedirection = { _, _, _ in nil }
            let outcome = try run(kind, server.baseURL + "/big", in: harness, timeout: 10)
            #expect(outcome.error == nil)
            #expect(outcome.status == 302)
            if kind == .discarded {
                #expect(outcome.discarded == Int64(size))
            } else {
                #expect(outcome.body == Data(repeating: UInt8(ascii: "x"), count: size))
            }
        }

        /// Declined, the redirect goes to `dataTaskDidReceiveResponse` like any response; the
        /// body kept while the plan was made waits for its answer with the rest.
        @Test func aDeclinedRedirectGoesThroughTheResponseHook() throws {
            let size = 300_000
            let server = try BigRedirectServer(size: size, framing: .chunked)
            defer { server.stop() }
            let harness = ClientHarness()
            defer { harness.finish() }
            let asked = Mutex<[Int]>([])
            harness.manager.taskWillPerformHTTPRedirection = { _, _, _ in nil }
            harness.manager.dataTaskDidReceiveResponse = { _, response in
                asked.withLock { $0.append(response.status.code) }
                usleep(100_000)
                return .allow
            }
            let outcome = try run(.data, server.baseURL + "/big", in: harness, timeout: 10)
            #expect(outcome.status == 302)
            #expect(outcome.body == Data(repeating: UInt8(ascii: "x"), count: size))
            #expect(asked.withLock { $0 } == [302])
        }

        /// A cancel while the hook decides wins; the late plan is ignored and the task completes
        /// once.
        @Test func aCancelWhileTheRedirectIsPlannedWins() throws {
            let server = try BigRedirectServer(size: 2 << 30, framing: .contentLength)
            defer { server.stop() }
            let harness = ClientHarness()
            defer { harness.finish() }
            let deciding = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            harness.manager.taskWillPerformHTTPRedirection = { _, _, request in
                deciding.signal()
                release.wait()
                return request
            }
            let (task, wait) = harness.makeTask(ClientHarness.request(server.baseURL + "/big", timeout: 10))
            task.resume()
            #expect(deciding.wait(timeout: .now() + 5) == .success)
            task.cancel()
            let outcome = try #require(wait(5))
            release.signal()
            #expect(outcome.code == .cancelled)
            usleep(200_000)
            #expect(outcome.calls == 1)
            #expect(task.countOfBytesReceived == 0)
            #expect(server.server.acceptedCount == 1)
        }

        /// Declined, a 2 GiB redirect body streams like any body: a task that discards it holds
        /// none of it.
        @Test func aDeclinedTwoGiBRedirectIsDiscardedInFlatMemory() throws {
            let server = try BigRedirectServer(size: 2 << 30, framing: .contentLength)
            defer { server.stop() }
            let harness = ClientHarness()
            defer { harness.finish() }
            harness.manager.taskWillPerformHTTPRedirection = { _, _, _ in nil }
            let before = residentMemoryBytes()
            server.tally.peakResident.withLock { $0 = before }
            let outcome = try run(.discarded, server.baseURL + "/big", in: harness)
            let growth = max(server.tally.peakResident.withLock { $0 }, residentMemoryBytes()) - before
            #expect(outcome.status == 302)
            #expect(outcome.discarded == Int64(2 << 30))
            #expect(growth < 64 << 20, "resident memory grew by \(growth >> 20) MiB")
        }
    }
}
