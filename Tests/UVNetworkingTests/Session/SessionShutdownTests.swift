import Dispatch
import Foundation
import Synchronization
import Testing
@_spi(Testing) @testable import UVNetworking

/// `await shutdown()` on a manager, a loop and a worker pool, each on its own loop and pool.
@Suite(.tags(.loopback)) struct SessionShutdownTests {
    /// A server that answers each request after `delay` seconds, on keep-alive connections.
    private func slowServer(delay: Double) throws -> ScriptedServer {
        try ScriptedServer { connection in
            try connection.serveKeepAlive { _ in
                connection.pause(delay)
                return ScriptedResponse.text("slow")
            }
        }
    }

    @Test func managerShutdownWaitsForRunningTasksAndClosesItsConnections() async throws {
        let server = try slowServer(delay: 0.3)
        defer { server.stop() }
        let loop = try EventLoop(name: "test.shutdown.manager")
        let workers = WorkerPool(threads: 1, name: "test.shutdown.manager.workers")
        let manager = SessionManager(loop: loop, workers: workers)
        manager.completionQueue = DispatchQueue(label: "test.shutdown.manager.completions")
        manager.responseSerializer = AcceptAllSerializer()
        let outcomes = Mutex<[Int?]>([])
        let group = DispatchGroup()
        manager.completionGroup = group
        let tasks = (0..<3).map { _ in
            manager.dataTask(with: Request(url: URL(string: "http://127.0.0.1:\(server.port)/")!), completionHandler: { response, _, _ in
                outcomes.withLock { $0.append(response.map { Int($0.status.code) }) }
            })
        }
        for task in tasks { task.resume() }
        try await Task.sleep(nanoseconds: 50_000_000)
        await manager.shutdown()
        // Every task ran to its end; the session holds no connection any more.
        #expect(tasks.allSatisfy { $0.state == .completed && $0.error == nil })
        #expect(manager.openConnectionCount == 0)
        #expect(group.wait(timeout: .now() + 5) == .success)
        #expect(outcomes.withLock { $0 } == [200, 200, 200])
        // Later tasks fail at once.
        let later = Mutex<NetworkingError.Code?>(nil)
        let done = DispatchSemaphore(value: 0)
        manager.dataTask(with: Request(url: URL(string: "http://127.0.0.1:\(server.port)/")!), completionHandler: { _, _, error in
            later.withLock { $0 = (error as? NetworkingError)?.code }
            done.signal()
        }).resume()
        #expect(done.wait(timeout: .now() + 5) == .success)
        #expect(later.withLock { $0 } == .sessionInvalidated)
        await loop.shutdown()
        await workers.shutdown()
    }

    @Test func loopShutdownEndsRunningTasksWithLoopShutDownAndRefusesJobs() async throws {
        let server = try slowServer(delay: 5)
        defer { server.stop() }
        let loop = try EventLoop(name: "test.shutdown.loop")
        let manager = SessionManager(loop: loop)
        manager.completionQueue = DispatchQueue(label: "test.shutdown.loop.completions")
        let ended = Mutex<[NetworkingError.Code?]>([])
        let done = DispatchSemaphore(value: 0)
        manager.dataTask(with: Request(url: URL(string: "http://127.0.0.1:\(server.port)/")!), completionHandler: { _, _, error in
            ended.withLock { $0.append((error as? NetworkingError)?.code) }
            done.signal()
        }).resume()
        try await Task.sleep(nanoseconds: 100_000_000)
        await loop.shutdown()
        #expect(done.wait(timeout: .now() + 5) == .success)
        #expect(loop.isShutDown)
        #expect(loop.execute {} == false)
        #expect(manager.openConnectionCount == 0)
        await loop.shutdown()  // idempotent
        shutDownBlocking(loop)
        try await Task.sleep(nanoseconds: 100_000_000)
        #expect(ended.withLock { $0 } == [.loopShutDown])
    }

    @Test func loopShutdownFromItsOwnThreadStopsWithoutTrapping() throws {
        let loop = try EventLoop(name: "test.shutdown.inloop")
        let stopped = DispatchSemaphore(value: 0)
        loop.execute {
            loop.shutdown()
            stopped.signal()
        }
        #expect(stopped.wait(timeout: .now() + 5) == .success)
        loop.shutdown()  // waits for the thread the job began stopping
        #expect(loop.execute {} == false)
    }
}

/// The synchronous shutdowns: in an async context, `shutdown()` names the async overload.
private func shutDownBlocking(_ loop: EventLoop) { loop.shutdown() }
private func shutDownBlocking(_ pool: WorkerPool) { pool.shutdown() }

@Suite(.tags(.loopback)) struct WorkerPoolShutdownTests {
    @Test func asyncShutdownRunsWhatIsQueuedThenRefusesJobs() async {
        let pool = WorkerPool(threads: 2, name: "test.shutdown.pool")
        let ran = Mutex(0)
        for _ in 0..<200 { pool.submit { usleep(100); ran.withLock { $0 += 1 } } }
        await pool.shutdown()
        #expect(ran.withLock { $0 } == 200)
        #expect(pool.isShutDown)
        #expect(pool.submit {} == false)
        await pool.shutdown()  // idempotent
        shutDownBlocking(pool)
    }

    @Test func shutdownFromOneOfItsOwnJobsDoesNotWaitForItself() {
        let pool = WorkerPool(threads: 1, name: "test.shutdown.pool.self")
        let returned = DispatchSemaphore(value: 0)
        pool.submit {
            pool.shutdown()
            returned.signal()
        }
        #expect(returned.wait(timeout: .now() + 5) == .success)
        pool.shutdown()
        #expect(pool.submit {} == false)
    }

    @Test func libraryWorkAfterShutdownStillRuns() {
        let pool = WorkerPool(threads: 1, name: "test.shutdown.pool.run")
        pool.shutdown()
        let ran = DispatchSemaphore(value: 0)
        pool.run { ran.signal() }
        #expect(ran.wait(timeout: .now() + 5) == .success)
    }
}
