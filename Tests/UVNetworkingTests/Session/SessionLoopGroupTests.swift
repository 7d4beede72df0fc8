import Dispatch
import Foundation
import LoopbackHTTPServer
import Synchronization
import Testing
@_spi(Testing) @testable import UVNetworking

/// A session over an `EventLoopGroup` of two loops: each origin's tasks on one loop, origins
/// spread over both, and the session's lifecycle (invalidate, reset, shutdown, release) on every
/// loop.
@Suite(.tags(.loopback)) struct SessionLoopGroupTests {
    /// The loop (of two) an http origin on 127.0.0.1 maps to.
    private static func loopIndex(port: Int, of count: Int = 2) -> Int {
        let origin = PreparedRequest.Origin(scheme: "http", host: "127.0.0.1", port: port)
        return Int(UInt(bitPattern: origin.placementHash) % UInt(count))
    }

    /// Servers made by `make` until one maps to each of two loops: [loop 0's, loop 1's]. The
    /// others are stopped.
    private static func oneServerPerLoop<Server>(_ make: () throws -> Server, port: (Server) -> Int,
                                                 stop: (Server) -> Void) throws -> [Server] {
        var chosen: [Server?] = [nil, nil]
        for _ in 0..<64 where chosen.contains(where: { $0 == nil }) {
            let server = try make()
            let index = loopIndex(port: port(server))
            if chosen[index] == nil { chosen[index] = server } else { stop(server) }
        }
        return try chosen.map { server in
            guard let server else { throw TestServerError(description: "no port mapped to one of the loops") }
            return server
        }
    }

    private static func loopbackServers() throws -> [(server: LoopbackHTTPServer, port: Int)] {
        try oneServerPerLoop({
            let server = LoopbackHTTPServer()
            return (server, try server.start())
        }, port: { $0.1 }, stop: { $0.0.stop() })
    }

    /// One server per loop that answers each request after 5 s: tasks still running when the
    /// test ends them.
    private static func slowServers() throws -> [ScriptedServer] {
        try oneServerPerLoop({
            try ScriptedServer { connection in
                try connection.serveKeepAlive { _ in
                    connection.pause(5)
                    return ScriptedResponse.text("slow")
                }
            }
        }, port: { $0.port }, stop: { $0.stop() })
    }

    private func makeManager(_ group: EventLoopGroup, onLoop: Bool = true) -> SessionManager {
        let manager = SessionManager(group: group)
        manager.completionQueue = DispatchQueue(label: "test.loopgroup.completions")
        manager.responseSerializer = AcceptAllSerializer()
        manager.deliversOnEventLoop = onLoop
        return manager
    }

    /// Which loop of `group` the calling thread runs, if any.
    private static func currentLoop(_ group: EventLoopGroup) -> Int? {
        group.loops.firstIndex { $0.inLoop }
    }

    /// Runs `perOrigin` GETs to each port, all at once; returns, per task, its origin's index
    /// and the loop its handler ran on, once every handler has run (each exactly once).
    private func fetchAll(_ manager: SessionManager, ports: [Int], perOrigin: Int) -> [(origin: Int, loop: Int?, status: Int?)] {
        let seen = Mutex<[Int: (origin: Int, loop: Int?, status: Int?)]>([:])
        let calls = Mutex<[Int: Int]>([:])
        let done = DispatchGroup()
        var tasks: [DataTask] = []
        for (origin, port) in ports.enumerated() {
            for _ in 0..<perOrigin {
                done.enter()
                let box = Mutex<Int>(-1)
                let task = manager.dataTask(with: Request(url: URL(string: "http://127.0.0.1:\(port)/items/1")!),
                                            completionHandler: { response, _, _ in
                    let id = box.withLock { $0 }
                    let first = calls.withLock { calls -> Bool in
                        calls[id, default: 0] += 1
                        return calls[id] == 1
                    }
                    seen.withLock { $0[id] = (origin, Self.currentLoop(manager.group), response.map { Int($0.status.code) }) }
                    if first { done.leave() }
                })
                box.withLock { $0 = task.taskIdentifier }
                tasks.append(task)
            }
        }
        for task in tasks { task.resume() }
        #expect(done.wait(timeout: .now() + 30) == .success)
        // Late second calls would show here.
        usleep(50_000)
        #expect(calls.withLock { $0.values.allSatisfy { $0 == 1 } && $0.count == tasks.count })
        for task in tasks { #expect(manager.loop(for: task) === manager.group.loops[Self.loopIndex(port: ports[tasks.firstIndex { $0 === task }! / perOrigin])]) }
        return Array(seen.withLock { $0 }.values)
    }

    @Test func eachOriginsTasksRunOnItsLoopAndOriginsSpreadOverBoth() throws {
        let servers = try Self.loopbackServers()
        defer { for server in servers { server.server.stop() } }
        let group = try EventLoopGroup(loopCount: 2, name: "test.loopgroup.spread")
        defer { group.shutdown() }
        let manager = makeManager(group)
        let results = fetchAll(manager, ports: servers.map(\.port), perOrigin: 20)
        #expect(results.count == 40)
        // Handlers run on the task's loop: origin 0's on loop 0, origin 1's on loop 1.
        for result in results {
            #expect(result.status == 200)
            #expect(result.loop == result.origin)
        }
        // Each loop holds its origin's pool.
        let counts = manager.openConnectionCounts
        #expect(counts[0] > 0 && counts[1] > 0, "\(counts)")
        manager.invalidateSessionCancelingTasks(false, resetSession: false)
        #expect(waitUntil(timeout: 10) { manager.openConnectionCount == 0 })
    }

    @Test func completionQueueDeliveryAlsoRunsEveryTaskOnceOnItsOriginsLoop() throws {
        let servers = try Self.loopbackServers()
        defer { for server in servers { server.server.stop() } }
        let group = try EventLoopGroup(loopCount: 2, name: "test.loopgroup.queue")
        defer { group.shutdown() }
        let manager = makeManager(group, onLoop: false)
        let results = fetchAll(manager, ports: servers.map(\.port), perOrigin: 10)
        #expect(results.count == 20)
        #expect(results.allSatisfy { $0.status == 200 && $0.loop == nil })
        let counts = manager.openConnectionCounts
        #expect(counts[0] > 0 && counts[1] > 0, "\(counts)")
        manager.invalidateSessionCancelingTasks(false, resetSession: false)
        #expect(waitUntil(timeout: 10) { manager.openConnectionCount == 0 })
    }

    @Test func resetClosesEveryLoopsConnectionsAndTheSessionGoesOnOverBothLoops() async throws {
        let servers = try Self.loopbackServers()
        defer { for server in servers { server.server.stop() } }
        let group = try EventLoopGroup(loopCount: 2, name: "test.loopgroup.reset")
        let listening = servers.map { openSocketCount(port: $0.port) }
        let manager = makeManager(group)
        let invalidations = Mutex(0)
        manager.sessionDidBecomeInvalid = { invalidations.withLock { $0 += 1 } }
        _ = fetchAll(manager, ports: servers.map(\.port), perOrigin: 4)
        manager.invalidateSessionCancelingTasks(false, resetSession: true)
        #expect(waitUntil(timeout: 10) { manager.openConnectionCount == 0 && invalidations.withLock { $0 } == 1 })
        for (index, port) in servers.map(\.port).enumerated() {
            #expect(waitUntil(timeout: 10) { openSocketCount(port: port) == listening[index] })
        }
        // A fresh session on both loops.
        let again = fetchAll(manager, ports: servers.map(\.port), perOrigin: 4)
        #expect(again.allSatisfy { $0.status == 200 && $0.loop == $0.origin })
        await manager.shutdown()
        #expect(manager.openConnectionCount == 0)
        #expect(waitUntil(timeout: 10) { invalidations.withLock { $0 } == 2 })
        await group.shutdown()
    }

    @Test func cancellingInvalidationEndsTheTasksOfEveryLoopOnce() throws {
        let servers = try Self.slowServers()
        defer { for server in servers { server.stop() } }
        let group = try EventLoopGroup(loopCount: 2, name: "test.loopgroup.cancel")
        defer { group.shutdown() }
        let manager = makeManager(group)
        let codes = Mutex<[NetworkingError.Code?]>([])
        let done = DispatchGroup()
        for server in servers {
            for _ in 0..<3 {
                done.enter()
                manager.dataTask(with: Request(url: URL(string: "http://127.0.0.1:\(server.port)/")!), completionHandler: { _, _, error in
                    codes.withLock { $0.append((error as? NetworkingError)?.code) }
                    done.leave()
                }).resume()
            }
        }
        #expect(waitUntil(timeout: 10) { manager.openConnectionCounts == [3, 3] })
        manager.invalidateSessionCancelingTasks(true, resetSession: false)
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(codes.withLock { $0 } == Array(repeating: .cancelled, count: 6))
        #expect(waitUntil(timeout: 10) { manager.openConnectionCount == 0 })
    }

    @Test func releasingTheManagerClosesItsConnectionsOnEveryLoop() throws {
        let servers = try Self.loopbackServers()
        defer { for server in servers { server.server.stop() } }
        let group = try EventLoopGroup(loopCount: 2, name: "test.loopgroup.release")
        defer { group.shutdown() }
        let listening = servers.map { openSocketCount(port: $0.port) }
        do {
            let manager = makeManager(group)
            _ = fetchAll(manager, ports: servers.map(\.port), perOrigin: 3)
            #expect(manager.openConnectionCounts.allSatisfy { $0 > 0 })
        }
        // Both ends of each connection belong to this process: none is left on either loop,
        // only the listeners.
        for (index, port) in servers.map(\.port).enumerated() {
            #expect(waitUntil(timeout: 10) { openSocketCount(port: port) == listening[index] })
        }
    }

    @Test func theGroupsShutdownEndsRunningTasksOnEveryLoop() throws {
        let servers = try Self.slowServers()
        defer { for server in servers { server.stop() } }
        let group = try EventLoopGroup(loopCount: 2, name: "test.loopgroup.groupdown")
        let manager = makeManager(group, onLoop: false)
        let codes = Mutex<[NetworkingError.Code?]>([])
        let done = DispatchGroup()
        for server in servers {
            done.enter()
            manager.dataTask(with: Request(url: URL(string: "http://127.0.0.1:\(server.port)/")!), completionHandler: { _, _, error in
                codes.withLock { $0.append((error as? NetworkingError)?.code) }
                done.leave()
            }).resume()
        }
        #expect(waitUntil(timeout: 10) { manager.openConnectionCounts == [1, 1] })
        group.shutdown()
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(codes.withLock { $0 } == [.loopShutDown, .loopShutDown])
        #expect(manager.openConnectionCount == 0)
    }

    @Test func aRedirectToAnOriginOfTheOtherLoopStaysOnTheTasksLoop() throws {
        // Two servers on different loops' origins; each redirects /start to the other's /end.
        let peer = Mutex(0)
        let servers = try Self.oneServerPerLoop({
            try ScriptedServer { connection in
                try connection.serveKeepAlive { request in
                    if request.target == "/start" {
                        return ScriptedResponse.text("", status: 302, reason: "Found",
                                                     headers: [("Location", "http://127.0.0.1:\(peer.withLock { $0 })/end")])
                    }
                    return ScriptedResponse.text("end")
                }
            }
        }, port: { $0.port }, stop: { $0.stop() })
        defer { for server in servers { server.stop() } }
        peer.withLock { $0 = servers[1].port }
        let group = try EventLoopGroup(loopCount: 2, name: "test.loopgroup.redirect")
        defer { group.shutdown() }
        let manager = makeManager(group)
        let outcome = Mutex<(loop: Int?, status: Int?, body: String?, calls: Int)>((nil, nil, nil, 0))
        let done = DispatchSemaphore(value: 0)
        let task = manager.dataTask(with: Request(url: URL(string: "http://127.0.0.1:\(servers[0].port)/start")!),
                                    completionHandler: { response, object, _ in
            outcome.withLock {
                $0 = (Self.currentLoop(group), response.map { Int($0.status.code) },
                      (object as? Data).map { String(decoding: $0, as: UTF8.self) }, $0.calls + 1)
            }
            done.signal()
        })
        task.resume()
        #expect(done.wait(timeout: .now() + 10) == .success)
        let seen = outcome.withLock { $0 }
        #expect(seen.status == 200 && seen.body == "end" && seen.calls == 1)
        // The task started on loop 0 and stayed there: both origins' connections are loop 0's.
        #expect(seen.loop == 0)
        #expect(manager.loop(for: task) === group.loops[0])
        #expect(manager.openConnectionCounts == [2, 0])
        manager.invalidateSessionCancelingTasks(false, resetSession: false)
        #expect(waitUntil(timeout: 10) { manager.openConnectionCount == 0 })
    }

    @Test func hooksRunOnTheTasksLoopAndAHandlerResumesATaskOfTheOtherLoop() throws {
        let servers = try Self.loopbackServers()
        defer { for server in servers { server.server.stop() } }
        let group = try EventLoopGroup(loopCount: 2, name: "test.loopgroup.hooks")
        defer { group.shutdown() }
        let manager = makeManager(group)
        // Origin index -> loops the hooks ran on.
        let hookLoops = Mutex<[String: [Int?]]>([:])
        let origin: @Sendable (SessionTask) -> String = { task in
            task.originalRequest.url.port == servers[0].port ? "0" : "1"
        }
        manager.dataTaskDidReceiveResponse = { task, _ in
            hookLoops.withLock { $0["response " + origin(task), default: []].append(Self.currentLoop(group)) }
            return .allow
        }
        manager.taskDidComplete = { task, _ in
            hookLoops.withLock { $0["complete " + origin(task), default: []].append(Self.currentLoop(group)) }
        }
        // The first task's handler (on loop 0) resumes a task of origin 1, whose handler must run
        // on loop 1.
        let second = Mutex<(loop: Int?, status: Int?)?>(nil)
        let done = DispatchSemaphore(value: 0)
        manager.dataTask(with: Request(url: URL(string: "http://127.0.0.1:\(servers[0].port)/items/1")!), completionHandler: { _, _, _ in
            manager.dataTask(with: Request(url: URL(string: "http://127.0.0.1:\(servers[1].port)/items/1")!), completionHandler: { response, _, _ in
                second.withLock { $0 = (Self.currentLoop(group), response.map { Int($0.status.code) }) }
                done.signal()
            }).resume()
        }).resume()
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(second.withLock { $0?.loop } == 1 && second.withLock { $0?.status } == 200)
        #expect(waitUntil(timeout: 5) { hookLoops.withLock { $0.count } == 4 })
        #expect(hookLoops.withLock { $0 } == ["response 0": [0], "complete 0": [0], "response 1": [1], "complete 1": [1]])
        manager.invalidateSessionCancelingTasks(false, resetSession: false)
        #expect(waitUntil(timeout: 10) { manager.openConnectionCount == 0 })
    }

    @Test func tasksResumedAndCancelledFromManyThreadsOverBothLoopsCompleteOnce() throws {
        let servers = try Self.loopbackServers()
        defer { for server in servers { server.server.stop() } }
        let group = try EventLoopGroup(loopCount: 2, name: "test.loopgroup.race")
        defer { group.shutdown() }
        let manager = makeManager(group, onLoop: false)
        let calls = Mutex<[Int: Int]>([:])
        let done = DispatchGroup()
        let threads = 8, perThread = 60
        for thread in 0..<threads {
            done.enter()
            Thread.detachNewThread {
                for index in 0..<perThread {
                    done.enter()
                    let port = servers[(thread + index) % 2].port
                    let key = thread * perThread + index
                    let task = manager.dataTask(with: Request(url: URL(string: "http://127.0.0.1:\(port)/items/\(index)")!),
                                                completionHandler: { _, _, _ in
                        let first = calls.withLock { calls -> Bool in
                            calls[key, default: 0] += 1
                            return calls[key] == 1
                        }
                        if first { done.leave() }
                    })
                    task.resume()
                    if index % 3 == 0 { task.cancel() }
                    if index % 5 == 0 { task.suspend(); task.resume() }
                }
                done.leave()
            }
        }
        #expect(done.wait(timeout: .now() + 30) == .success)
        usleep(50_000)
        #expect(calls.withLock { $0.count == threads * perThread && $0.values.allSatisfy { $0 == 1 } })
        #expect(waitUntil(timeout: 5) { manager.tasks.isEmpty })
        manager.invalidateSessionCancelingTasks(false, resetSession: false)
        #expect(waitUntil(timeout: 10) { manager.openConnectionCount == 0 })
    }

    @Test func aSingleLoopSessionIsAGroupOfOne() throws {
        let loop = try EventLoop(name: "test.loopgroup.single")
        defer { loop.shutdown() }
        let manager = SessionManager(loop: loop)
        #expect(manager.group.loops.count == 1 && manager.group.loops[0] === loop && manager.loop === loop)
        let task = manager.dataTask(with: Request(url: URL(string: "http://127.0.0.1:9/")!))
        #expect(manager.loop(for: task) === loop)
        task.cancel()
    }
}
