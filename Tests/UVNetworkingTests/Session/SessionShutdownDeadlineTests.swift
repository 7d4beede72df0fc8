import Dispatch
import Foundation
import Synchronization
import Testing
@_spi(Testing) @testable import UVNetworking

/// `shutdown(deadline:)` against real sockets: draining, the deadline, refusal of new tasks,
/// connections and descriptors, uploads and downloads, repeated calls, and `shared`.
@Suite(.tags(.loopback)) struct SessionShutdownDeadlineTests {
    /// Answers each request after `delay` seconds, on keep-alive connections.
    private func slowServer(delay: Double) throws -> ScriptedServer {
        try ScriptedServer { connection in
            try connection.serveKeepAlive { request in
                if request.target != "/fast" { connection.pause(delay) }
                return ScriptedResponse.text("slow")
            }
        }
    }

    private func url(_ server: ScriptedServer, _ path: String = "/") -> String { "http://127.0.0.1:\(server.port)\(path)" }

    @Test func slowRequestsInFlightFinishBeforeTheDeadline() async throws {
        let server = try slowServer(delay: 0.3)
        defer { server.stop() }
        let harness = ClientHarness()
        let invalidations = Mutex(0)
        harness.manager.sessionDidBecomeInvalid = { invalidations.withLock { $0 += 1 } }
        let tasks = (0..<3).map { _ in harness.makeTask(ClientHarness.request(url(server))) }
        for (task, _) in tasks { task.resume() }
        try await Task.sleep(for: .milliseconds(50))
        await harness.manager.shutdown(gracePeriod: .seconds(30))
        for (task, wait) in tasks {
            let outcome = wait(5)
            #expect(outcome?.status == 200 && outcome?.calls == 1, "task \(task.taskIdentifier): \(String(describing: outcome))")
        }
        #expect(harness.manager.openConnectionCount == 0)
        // The server's side of the connections too (the server runs in this process).
        server.stop()
        harness.expectNothingLeft()
        try await Task.sleep(for: .milliseconds(100))
        #expect(invalidations.withLock { $0 } == 1)
    }

    @Test func tasksStillRunningAtTheDeadlineAreCancelledOnce() async throws {
        let server = try slowServer(delay: 30)
        defer { server.stop() }
        let harness = ClientHarness()
        let tasks = (0..<2).map { _ in harness.makeTask(ClientHarness.request(url(server))) }
        for (task, _) in tasks { task.resume() }
        try await Task.sleep(for: .milliseconds(50))
        await harness.manager.shutdown(deadline: .now + .milliseconds(200))
        for (_, wait) in tasks {
            let outcome = wait(5)
            #expect(outcome?.code == .cancelled && outcome?.calls == 1)
        }
        #expect(harness.manager.openConnectionCount == 0)
        // The server's side of the connections too (the server runs in this process).
        server.stop()
        harness.expectNothingLeft()
    }

    @Test func newTasksFailAtOnceWhileTheSessionDrains() async throws {
        let server = try slowServer(delay: 0.5)
        defer { server.stop() }
        let harness = ClientHarness()
        let (running, waitRunning) = harness.makeTask(ClientHarness.request(url(server)))
        running.resume()
        try await Task.sleep(for: .milliseconds(50))
        async let drained: Void = harness.manager.shutdown(gracePeriod: .seconds(30))
        // Invalidation reaches the loop in a job; give it a moment, then a new task is refused
        // while the first still runs.
        try await Task.sleep(for: .milliseconds(50))
        let later = harness.fetch(url(server, "/fast"))
        #expect(later.code == .sessionInvalidated)
        #expect(running.state != .completed)
        await drained
        #expect(waitRunning(5)?.status == 200)
        // The server's side of the connections too (the server runs in this process).
        server.stop()
        harness.expectNothingLeft()
    }

    @Test func idleConnectionsCloseAtOnceWhileBusyOnesServeTheirTasks() async throws {
        let server = try slowServer(delay: 1)
        defer { server.stop() }
        let harness = ClientHarness()
        // One connection busy with a slow exchange, one left idle by a fast one made meanwhile.
        let (slow, waitSlow) = harness.makeTask(ClientHarness.request(url(server)))
        slow.resume()
        #expect(waitUntil(timeout: 5) { harness.manager.openConnectionCount == 1 })
        #expect(harness.fetch(url(server, "/fast")).status == 200)
        #expect(harness.manager.openConnectionCount == 2)
        async let drained: Void = harness.manager.shutdown(gracePeriod: .seconds(30))
        let idleClosed = waitUntil(timeout: 5) { harness.manager.openConnectionCount == 1 }
        #expect(idleClosed)
        #expect(slow.state != .completed)
        await drained
        #expect(waitSlow(5)?.status == 200)
        #expect(harness.manager.openConnectionCount == 0)
        // The server's side of the connections too (the server runs in this process).
        server.stop()
        harness.expectNothingLeft()
    }

    @Test func uploadsAndDownloadsInFlightFinishOrAreCancelled() async throws {
        let server = try slowServer(delay: 0.3)
        defer { server.stop() }
        let harness = ClientHarness()
        let upload = Mutex<Outcome?>(nil)
        let download = Mutex<(status: Int?, file: URL?, error: NetworkingError.Code?, calls: Int)?>(nil)
        var request = ClientHarness.request(url(server), method: .post)
        request.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
        let body = Data(repeating: 7, count: 200_000)
        harness.manager.uploadTask(with: request, from: body, completionHandler: { response, object, error in
            upload.withLock { $0 = Outcome(response: response, object: object, error: error, calls: ($0?.calls ?? 0) + 1) }
        }).resume()
        let destination = FileManager.default.temporaryDirectory.appendingPathComponent("uvnetworking-drain-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: destination) }
        harness.manager.downloadTask(with: ClientHarness.request(url(server)), destination: { _, _ in destination },
                                     completionHandler: { response, file, error in
            download.withLock { $0 = (response.map { Int($0.status.code) }, file, (error as? NetworkingError)?.code, ($0?.calls ?? 0) + 1) }
        }).resume()
        try await Task.sleep(for: .milliseconds(50))
        await harness.manager.shutdown(gracePeriod: .seconds(30))
        #expect(waitUntil(timeout: 5) { upload.withLock { $0 } != nil && download.withLock { $0 } != nil })
        #expect(upload.withLock { $0?.status } == 200 && upload.withLock { $0?.calls } == 1)
        let downloaded = download.withLock { $0 }
        #expect(downloaded?.status == 200 && downloaded?.calls == 1 && downloaded?.file == destination)
        #expect((try? Data(contentsOf: destination)) == Data("slow".utf8))
        // The server's side of the connections too (the server runs in this process).
        server.stop()
        harness.expectNothingLeft()
    }

    @Test func aDownloadPastTheDeadlineIsCancelledOnce() async throws {
        let server = try slowServer(delay: 30)
        defer { server.stop() }
        let harness = ClientHarness()
        let ended = Mutex<(error: NetworkingError.Code?, calls: Int)?>(nil)
        harness.manager.downloadTask(with: ClientHarness.request(url(server)), completionHandler: { _, _, error in
            ended.withLock { $0 = ((error as? NetworkingError)?.code, ($0?.calls ?? 0) + 1) }
        }).resume()
        try await Task.sleep(for: .milliseconds(50))
        await harness.manager.shutdown(gracePeriod: .milliseconds(100))
        #expect(waitUntil(timeout: 5) { ended.withLock { $0 } != nil })
        #expect(ended.withLock { $0?.error } == .cancelled && ended.withLock { $0?.calls } == 1)
        // The server's side of the connections too (the server runs in this process).
        server.stop()
        harness.expectNothingLeft()
    }

    @Test func aLoopShutDownDuringTheDrainOfADownloadEndsTheWait() async throws {
        // A download's task ends once its file is closed on a worker; with the loop gone it ends
        // off the loop, and the waiting shutdown must be told all the same.
        let server = try slowServer(delay: 30)
        defer { server.stop() }
        let loop = try EventLoop()
        let manager = SessionManager(loop: loop)
        manager.completionQueue = DispatchQueue(label: "test.shutdown.deadline.loop")
        let ended = Mutex<(error: NetworkingError.Code?, calls: Int)?>(nil)
        manager.downloadTask(with: ClientHarness.request(url(server)), completionHandler: { _, _, error in
            ended.withLock { $0 = ((error as? NetworkingError)?.code, ($0?.calls ?? 0) + 1) }
        }).resume()
        try await Task.sleep(for: .milliseconds(50))
        let returned = Atomic(false)
        let shutdown = Task {
            await manager.shutdown(gracePeriod: .seconds(60))
            returned.store(true, ordering: .releasing)
        }
        try await Task.sleep(for: .milliseconds(50))
        await loop.shutdown()
        #expect(waitUntil(timeout: 5) { returned.load(ordering: .acquiring) }, "shutdown(gracePeriod:) still waits")
        #expect(waitUntil(timeout: 5) { ended.withLock { $0 } != nil })
        #expect(ended.withLock { $0?.error } == .loopShutDown && ended.withLock { $0?.calls } == 1)
        if returned.load(ordering: .acquiring) { await shutdown.value }
    }

    @Test func aStreamWhoseConsumerStalledIsCancelledAtTheDeadline() async throws {
        // A body far larger than any buffer: the client stops reading for the idle consumer.
        let server = try ScriptedServer { connection in
            _ = try connection.readRequest()
            try connection.write("HTTP/1.1 200 OK\r\nContent-Length: \(1 << 30)\r\n\r\n")
            let chunk = [UInt8](repeating: 0x61, count: 1 << 16)
            while true { try connection.write(chunk) }
        }
        defer { server.stop() }
        let harness = ClientHarness()
        let (response, stream) = try await harness.manager.bytes(for: ClientHarness.request(url(server)))
        #expect(response.status.code == 200)
        try await Task.sleep(for: .milliseconds(100))
        let returned = Atomic(false)
        let manager = harness.manager
        let shutdown = Task {
            await manager.shutdown(gracePeriod: .milliseconds(100))
            returned.store(true, ordering: .releasing)
        }
        #expect(waitUntil(timeout: 5) { returned.load(ordering: .acquiring) }, "shutdown(gracePeriod:) still waits")
        var failure: NetworkingError?
        do {
            for try await _ in stream {}
        } catch {
            failure = error as? NetworkingError
        }
        #expect(failure?.code == .cancelled)
        if returned.load(ordering: .acquiring) { await shutdown.value }
        server.stop()
        harness.expectNothingLeft()
    }

    /// Tasks that wait at the deadline: in a pool's queue (one connection per host), for the
    /// session's connection budget (one in all), or for their turn (paced).
    @Test(arguments: ["queue", "budget", "paced"])
    func waitingTasksAreCancelledOnceAtTheDeadline(wait: String) async throws {
        let servers = try (0..<2).map { _ in try slowServer(delay: 30) }
        defer { for server in servers { server.stop() } }
        let harness = ClientHarness { configuration in
            switch wait {
            case "queue": configuration.maximumConnectionsPerHost = 1
            case "budget": configuration.maximumConnections = 1
            default: configuration.delayPerHost = 30
            }
        }
        let urls = wait == "budget" ? [url(servers[0]), url(servers[1]), url(servers[1])] : [url(servers[0]), url(servers[0]), url(servers[0])]
        let tasks = urls.map { harness.makeTask(ClientHarness.request($0)) }
        for (task, _) in tasks { task.resume() }
        try await Task.sleep(for: .milliseconds(100))
        let returned = Atomic(false)
        let manager = harness.manager
        let shutdown = Task {
            await manager.shutdown(gracePeriod: .milliseconds(100))
            returned.store(true, ordering: .releasing)
        }
        #expect(waitUntil(timeout: 5) { returned.load(ordering: .acquiring) }, "shutdown(gracePeriod:) still waits")
        for (task, wait) in tasks {
            let outcome = wait(5)
            #expect(outcome?.code == .cancelled && outcome?.calls == 1, "task \(task.taskIdentifier): \(String(describing: outcome))")
        }
        if returned.load(ordering: .acquiring) { await shutdown.value }
        #expect(harness.manager.openConnectionCount == 0)
        for server in servers { server.stop() }
        harness.expectNothingLeft()
    }

    /// A download writing its file when the deadline comes, or when the loop shuts down during
    /// the drain: it ends once, and no file is left in the download directory.
    @Test(arguments: ["deadline", "loop"])
    func aDownloadWritingAtTheEndLeavesNoFile(end: String) async throws {
        let server = try ScriptedServer { connection in
            _ = try connection.readRequest()
            try connection.write("HTTP/1.1 200 OK\r\nContent-Length: \(1 << 30)\r\n\r\n")
            let chunk = [UInt8](repeating: 0x61, count: 1 << 14)
            while true {
                try connection.write(chunk)
                connection.pause(0.001)
            }
        }
        defer { server.stop() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("uvnetworking-drain-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let loop = try EventLoop()
        var configuration = SessionConfiguration.default
        configuration.downloadDirectory = directory
        let manager = SessionManager(configuration: configuration, loop: loop)
        manager.completionQueue = DispatchQueue(label: "test.shutdown.deadline.files")
        let ended = Mutex<(error: NetworkingError.Code?, calls: Int)?>(nil)
        manager.downloadTask(with: ClientHarness.request(url(server)), completionHandler: { _, _, error in
            ended.withLock { $0 = ((error as? NetworkingError)?.code, ($0?.calls ?? 0) + 1) }
        }).resume()
        try await Task.sleep(for: .milliseconds(150))
        let returned = Atomic(false)
        let shutdown = Task {
            await manager.shutdown(gracePeriod: end == "deadline" ? .milliseconds(50) : .seconds(60))
            returned.store(true, ordering: .releasing)
        }
        if end == "loop" {
            try await Task.sleep(for: .milliseconds(20))
            await loop.shutdown()
        }
        #expect(waitUntil(timeout: 5) { returned.load(ordering: .acquiring) }, "shutdown(gracePeriod:) still waits")
        #expect(waitUntil(timeout: 5) { ended.withLock { $0 } != nil })
        try await Task.sleep(for: .milliseconds(100))
        #expect(ended.withLock { $0?.error } == (end == "deadline" ? .cancelled : .loopShutDown) && ended.withLock { $0?.calls } == 1)
        #expect(waitUntil(timeout: 5) { ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? ["?"]).isEmpty },
                "left: \(String(describing: try? FileManager.default.contentsOfDirectory(atPath: directory.path)))")
        if returned.load(ordering: .acquiring) { await shutdown.value }
        await loop.shutdown()
    }

    @Test func aTaskInTheTLSHandshakeIsCancelledOnceAtTheDeadline() async throws {
        // Takes the ClientHello and never answers.
        let server = try ScriptedServer { connection in
            _ = try? connection.readUntilClose(timeout: 30)
        }
        defer { server.stop() }
        let harness = ClientHarness()
        let (task, wait) = harness.makeTask(ClientHarness.request("https://127.0.0.1:\(server.port)/"))
        task.resume()
        try await Task.sleep(for: .milliseconds(100))
        let returned = Atomic(false)
        let manager = harness.manager
        let shutdown = Task {
            await manager.shutdown(gracePeriod: .milliseconds(100))
            returned.store(true, ordering: .releasing)
        }
        #expect(waitUntil(timeout: 5) { returned.load(ordering: .acquiring) }, "shutdown(gracePeriod:) still waits")
        let outcome = wait(5)
        #expect(outcome?.code == .cancelled && outcome?.calls == 1, "\(String(describing: outcome))")
        if returned.load(ordering: .acquiring) { await shutdown.value }
        #expect(harness.manager.openConnectionCount == 0)
        server.stop()
        harness.expectNothingLeft()
    }

    @Test func tasksResumedWhileTheShutdownBeginsEndOnceEachWay() async throws {
        // Either the loop takes the resume first (the task runs, then is cancelled or finishes)
        // or the invalidation (it fails with .sessionInvalidated): never twice, never neither.
        let server = try slowServer(delay: 0.05)
        defer { server.stop() }
        let loops = try EventLoopGroup(loopCount: 2)
        for round in 0..<5 {
            let manager = SessionManager(group: loops)
            manager.completionQueue = DispatchQueue(label: "test.shutdown.deadline.resume")
            manager.responseSerializer = AcceptAllSerializer()
            let outcomes = Mutex<[Int: [NetworkingError.Code?]]>([:])
            let tasks = (0..<40).map { index in
                manager.dataTask(with: ClientHarness.request(url(server, "/\(index % 2 == 0 ? "fast" : "slow")?\(index)")),
                                 completionHandler: { _, _, error in
                    outcomes.withLock { $0[index, default: []].append((error as? NetworkingError)?.code) }
                })
            }
            let shutdown = Task { await manager.shutdown(gracePeriod: .milliseconds(round * 10)) }
            DispatchQueue.concurrentPerform(iterations: 4) { part in
                for index in stride(from: part, to: tasks.count, by: 4) { tasks[index].resume() }
            }
            await shutdown.value
            #expect(waitUntil(timeout: 5) { outcomes.withLock { $0.count } == tasks.count })
            try await Task.sleep(for: .milliseconds(50))
            for (index, codes) in outcomes.withLock({ $0 }) {
                #expect(codes.count == 1, "task \(index): \(codes)")
                #expect(codes.allSatisfy { $0 == nil || $0 == .cancelled || $0 == .sessionInvalidated }, "task \(index): \(codes)")
            }
            #expect(manager.openConnectionCounts == [0, 0])
        }
        await loops.shutdown()
    }

    @Test func anUploadFromAHungSequenceIsCancelledAtTheDeadline() async throws {
        let server = try ScriptedServer { connection in
            _ = try connection.readRequestHead()
            _ = try? connection.readUntilClose(timeout: 10)
        }
        defer { server.stop() }
        let harness = ClientHarness()
        let log = GeneratedBytesLog()
        var request = ClientHarness.request(url(server), method: .post)
        request.bodyStream = GeneratedBytes.body(.init(produce: 1 << 30, hangAfter: 100_000), declaredLength: nil, log: log)
        let (task, wait) = harness.makeTask(request)
        task.resume()
        #expect(waitUntil(timeout: 10) { task.countOfBytesSent == 100_000 })
        let returned = Atomic(false)
        let manager = harness.manager
        let shutdown = Task {
            await manager.shutdown(gracePeriod: .milliseconds(100))
            returned.store(true, ordering: .releasing)
        }
        #expect(waitUntil(timeout: 5) { returned.load(ordering: .acquiring) }, "shutdown(gracePeriod:) still waits")
        let outcome = wait(5)
        #expect(outcome?.code == .cancelled && outcome?.calls == 1, "\(String(describing: outcome))")
        #expect(waitUntil(timeout: 5) { log.cancelledInNext == 1 && log.iterationsEnded == 1 })
        if returned.load(ordering: .acquiring) { await shutdown.value }
        server.stop()
        harness.expectNothingLeft()
    }

    @Test func sessionDidBecomeInvalidRunsOnceAfterTheLoopShutDown() async throws {
        let loop = try EventLoop()
        let manager = SessionManager(loop: loop)
        let queue = DispatchQueue(label: "test.shutdown.deadline.invalid")
        manager.completionQueue = queue
        let invalidations = Mutex(0)
        manager.sessionDidBecomeInvalid = { invalidations.withLock { $0 += 1 } }
        await loop.shutdown()
        await manager.shutdown()
        await manager.shutdown(gracePeriod: .zero)
        manager.invalidateSessionCancelingTasks(true, resetSession: false)
        queue.sync {}
        #expect(invalidations.withLock { $0 } == 1)
    }

    /// A group of two loops, one of them shut down already: shutdown returns, and the session
    /// is reported invalid once however many calls end it.
    @Test(arguments: [0, 1])
    func aGroupWithOneLoopShutDownDrainsAndReportsOnce(down: Int) async throws {
        let loops = try EventLoopGroup(loopCount: 2)
        let manager = SessionManager(group: loops)
        let queue = DispatchQueue(label: "test.shutdown.deadline.half")
        manager.completionQueue = queue
        let invalidations = Mutex(0)
        manager.sessionDidBecomeInvalid = { invalidations.withLock { $0 += 1 } }
        await loops.loops[down].shutdown()
        await manager.shutdown(gracePeriod: .seconds(60))
        await manager.shutdown()
        manager.invalidateSessionCancelingTasks(true, resetSession: false)
        try await Task.sleep(for: .milliseconds(50))
        queue.sync {}
        #expect(invalidations.withLock { $0 } == 1)
        await loops.shutdown()
    }

    @Test func callingTwiceAtOnceReturnsBothWithTheEarlierDeadline() async throws {
        let server = try slowServer(delay: 30)
        defer { server.stop() }
        let harness = ClientHarness()
        let invalidations = Mutex(0)
        harness.manager.sessionDidBecomeInvalid = { invalidations.withLock { $0 += 1 } }
        let (task, wait) = harness.makeTask(ClientHarness.request(url(server)))
        task.resume()
        try await Task.sleep(for: .milliseconds(50))
        async let first: Void = harness.manager.shutdown(gracePeriod: .seconds(60))
        async let second: Void = harness.manager.shutdown(gracePeriod: .milliseconds(150))
        _ = await (first, second)
        #expect(wait(5)?.code == .cancelled)
        // Once more after the end: returns at once.
        await harness.manager.shutdown(deadline: .now)
        await harness.manager.shutdown()
        // The server's side of the connections too (the server runs in this process).
        server.stop()
        harness.expectNothingLeft()
        try await Task.sleep(for: .milliseconds(100))
        #expect(invalidations.withLock { $0 } == 1)
    }

    @Test func cancellingTheWaitingTaskCancelsTheRunningOnes() async throws {
        let server = try slowServer(delay: 30)
        defer { server.stop() }
        let harness = ClientHarness()
        let (task, wait) = harness.makeTask(ClientHarness.request(url(server)))
        task.resume()
        try await Task.sleep(for: .milliseconds(50))
        let manager = harness.manager
        let shutdown = Task { await manager.shutdown(gracePeriod: .seconds(60)) }
        try await Task.sleep(for: .milliseconds(50))
        shutdown.cancel()
        await shutdown.value
        #expect(wait(5)?.code == .cancelled)
        // The server's side of the connections too (the server runs in this process).
        server.stop()
        harness.expectNothingLeft()
    }

    @Test func everyLoopOfAGroupDrainsAndCancelsAtTheDeadline() async throws {
        // Four origins over two loops: each loop's engine has a running task to cancel or finish.
        let slow = try (0..<2).map { _ in try slowServer(delay: 30) }
        let quick = try (0..<2).map { _ in try slowServer(delay: 0.2) }
        defer { for server in slow + quick { server.stop() } }
        let loops = try EventLoopGroup(loopCount: 2)
        let manager = SessionManager(group: loops)
        manager.completionQueue = DispatchQueue(label: "test.shutdown.deadline.group")
        manager.responseSerializer = AcceptAllSerializer()
        let outcomes = Mutex<[Int: NetworkingError.Code?]>([:])
        for (index, server) in (slow + quick).enumerated() {
            manager.dataTask(with: ClientHarness.request(url(server)), completionHandler: { _, _, error in
                // updateValue: a subscript assignment of nil (a success) would remove the key.
                outcomes.withLock { _ = $0.updateValue((error as? NetworkingError)?.code, forKey: index) }
            }).resume()
        }
        try await Task.sleep(for: .milliseconds(50))
        await manager.shutdown(gracePeriod: .milliseconds(600))
        #expect(manager.openConnectionCounts == [0, 0])
        #expect(waitUntil(timeout: 5) { outcomes.withLock { $0.count } == 4 })
        #expect(outcomes.withLock { $0 } == [0: .cancelled, 1: .cancelled, 2: nil, 3: nil])
        await loops.shutdown()
    }

    @Test func sharedRefusesShutdownAndKeepsServingOthers() async throws {
        // JSON: the shared session's serializer is the default one.
        let server = try ScriptedServer { connection in
            try connection.serveKeepAlive { request in
                if request.target != "/fast" { connection.pause(0.3) }
                return ScriptedResponse.text("{}", headers: [("Content-Type", "application/json")])
            }
        }
        defer { server.stop() }
        let shared = SessionManager.shared
        #expect(shared.isShared)
        #expect(!SessionManager().isShared)
        #expect(shared.loop === EventLoop.shared && shared.workers === WorkerPool.shared)
        // Another user's request, running while someone tries to end the shared session.
        let inFlight = Task { try await shared.data(for: ClientHarness.request(url(server))) }
        try await Task.sleep(for: .milliseconds(50))
        shared.invalidateSessionCancelingTasks(true, resetSession: false)
        await shared.shutdown(deadline: .now)
        await shared.shutdown()
        #expect(try await inFlight.value.statusCode == 200)
        // And it still takes new tasks.
        #expect(try await shared.data(for: ClientHarness.request(url(server, "/fast"))).statusCode == 200)
    }
}
