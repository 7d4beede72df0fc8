import Dispatch
import Foundation
import Synchronization
import Testing
@testable import UVNetworking

/// The calling thread's kernel id, from /proc/thread-self ("PID/task/TID").
private func currentThreadID() -> pid_t {
    let link = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")) ?? ""
    return pid_t(link.split(separator: "/").last.flatMap { Int32($0) } ?? -1)
}

@Suite(.tags(.loopback)) struct EventLoopGroupTests {
    @Test func startsEveryLoopOnAThreadOfItsOwn() throws {
        let group = try EventLoopGroup(loopCount: 3, name: "test.group.start")
        defer { group.shutdown() }
        #expect(group.loops.count == 3)
        let threads = Mutex<[pthread_t]>([])
        let offLoop = Mutex(0)
        let done = DispatchGroup()
        for loop in group.loops {
            done.enter()
            let accepted = loop.execute {
                if !loop.inLoop { offLoop.withLock { $0 += 1 } }
                threads.withLock { $0.append(pthread_self()) }
                done.leave()
            }
            #expect(accepted)
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        let seen = threads.withLock { $0 }
        #expect(seen.count == 3 && offLoop.withLock { $0 } == 0)
        for (index, thread) in seen.enumerated() {
            #expect(!seen[(index + 1)...].contains { pthread_equal($0, thread) != 0 })
        }
        // No loop is another's.
        #expect(!group.loops[0].inLoop)
    }

    @Test func atLeastOneLoopAndTheDefaultIsOnePerCore() throws {
        let group = try EventLoopGroup(loopCount: 0, name: "test.group.one")
        #expect(group.loops.count == 1)
        group.shutdown()
        #expect(EventLoopGroup.defaultLoopCount == ProcessInfo.processInfo.activeProcessorCount)
        // (`EventLoopGroup.shared` is left alone: its loops would outlive the test.)
    }

    @Test func nextTakesTheLoopsInTurn() throws {
        let group = try EventLoopGroup(loopCount: 3, name: "test.group.next")
        defer { group.shutdown() }
        let picked = (0..<9).map { _ in group.next() }
        let positions = picked.map { loop in group.loops.firstIndex { $0 === loop }! }
        // Wherever it starts, each call takes the next loop.
        for index in 1..<positions.count {
            #expect(positions[index] == (positions[index - 1] + 1) % 3)
        }
    }

    @Test func shutdownStopsEveryLoopJoinsEveryThreadAndLeaksNoDescriptor() throws {
        let descriptors = openFileDescriptorCount()
        let group = try EventLoopGroup(loopCount: 4, name: "test.group.shutdown")
        // Each loop's thread, by its kernel id. (Not the process's thread count: Dispatch's
        // threads come and go meanwhile.)
        var loopThreads: [pid_t] = []
        // A timer left armed on each loop: shutdown closes it rather than wait for it.
        for loop in group.loops {
            let armed = DispatchSemaphore(value: 0)
            nonisolated(unsafe) var thread: pid_t = 0
            loop.execute {
                thread = currentThreadID()
                let timer = LoopTimer(loop: loop) {}
                timer.arm(at: LoopTimer.now(loop) + 60_000)
                armed.signal()
            }
            armed.wait()
            loopThreads.append(thread)
        }
        #expect(Set(loopThreads).count == 4 && !loopThreads.contains(currentThreadID()))
        group.shutdown()
        #expect(group.loops.allSatisfy { $0.isShutDown && $0.execute {} == false })
        group.shutdown()  // idempotent
        // Every thread joined, every descriptor (epoll, eventfd) closed.
        #expect(waitUntil(timeout: 5) { loopThreads.allSatisfy { !FileManager.default.fileExists(atPath: "/proc/self/task/\($0)") } })
        #expect(openFileDescriptorCount() == descriptors)
    }

    @Test func asyncShutdownStopsEveryLoop() async throws {
        let group = try EventLoopGroup(loopCount: 2, name: "test.group.async")
        await group.shutdown()
        #expect(group.loops.allSatisfy { $0.isShutDown })
        await group.shutdown()
    }

    @Test func shutdownFromOneOfItsLoopsStartsItAndReturns() throws {
        let group = try EventLoopGroup(loopCount: 2, name: "test.group.inside")
        let returned = DispatchSemaphore(value: 0)
        group.loops[1].execute {
            group.shutdown()
            returned.signal()
        }
        #expect(returned.wait(timeout: .now() + 10) == .success)
        let stopped = DispatchGroup()
        for loop in group.loops {
            stopped.enter()
            loop.whenStopped { stopped.leave() }
        }
        #expect(stopped.wait(timeout: .now() + 10) == .success)
    }

    @Test func aGroupOfExistingLoopsShutsThemDown() throws {
        let loop = try EventLoop(name: "test.group.wrapped")
        let group = EventLoopGroup(loops: [loop])
        #expect(group.next() === loop)
        #expect(group.next() === loop)
        group.shutdown()
        #expect(loop.isShutDown)
    }
}
