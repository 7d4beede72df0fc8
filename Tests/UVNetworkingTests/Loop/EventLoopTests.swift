import Dispatch
import Foundation
import Synchronization
import Testing
@_spi(Testing) @testable import UVNetworking

@Suite(.tags(.loopback)) struct EventLoopTests {
    @Test func jobsFromManyThreadsAllRunOnTheLoopThreadInPerThreadOrder() throws {
        let loop = try EventLoop(name: "test.loop")
        let seen = Mutex([Int: [Int]]())
        let offLoop = Mutex(0)
        let done = DispatchGroup()
        let producers = 8, perProducer = 2_000
        for producer in 0..<producers {
            done.enter()
            Thread.detachNewThread {
                for index in 0..<perProducer {
                    loop.execute {
                        if !loop.inLoop { offLoop.withLock { $0 += 1 } }
                        seen.withLock { $0[producer, default: []].append(index) }
                    }
                }
                done.leave()
            }
        }
        done.wait()
        let flushed = DispatchSemaphore(value: 0)
        loop.execute { flushed.signal() }
        #expect(flushed.wait(timeout: .now() + 10) == .success)
        #expect(offLoop.withLock { $0 } == 0)
        let orders = seen.withLock { $0 }
        #expect(orders.count == producers)
        #expect(orders.values.allSatisfy { $0 == Array(0..<perProducer) })
        loop.shutdown()
    }

    @Test func shutdownClosesEveryHandleJoinsTheThreadAndRefusesLaterJobs() throws {
        let loop = try EventLoop(name: "test.loop.shutdown")
        let armed = DispatchSemaphore(value: 0)
        loop.execute {
            // A timer left armed: shutdown must close it rather than wait for it.
            let timer = LoopTimer(loop: loop) {}
            timer.arm(at: LoopTimer.now(loop) + 60_000)
            armed.signal()
        }
        armed.wait()
        #expect(loop.openHandleCountFromOutside() == 1)
        loop.shutdown()
        #expect(loop.execute {} == false)
        loop.shutdown()  // idempotent
    }

    @Test func timersFireOnceAtTheirDeadlineAndCanBeRearmedOrDisarmed() throws {
        let loop = try EventLoop(name: "test.loop.timers")
        let fired = Mutex([String]())
        let done = DispatchSemaphore(value: 0)
        loop.execute {
            let started = LoopTimer.now(loop)
            var disarmed: LoopTimer?
            disarmed = LoopTimer(loop: loop) { fired.withLock { $0.append("disarmed") } }
            disarmed!.arm(at: started + 20)
            disarmed!.disarm()
            var timer: LoopTimer?
            var count = 0
            timer = LoopTimer(loop: loop) {
                count += 1
                fired.withLock { $0.append("fired \(count) after \(LoopTimer.now(loop) - started) ms") }
                if count == 1 {
                    timer!.arm(at: LoopTimer.now(loop) + 10)
                } else {
                    timer!.close()
                    disarmed!.close()
                    done.signal()
                }
            }
            timer!.arm(at: started + 30)
        }
        #expect(done.wait(timeout: .now() + 5) == .success)
        let log = fired.withLock { $0 }
        #expect(log.count == 2)
        #expect(!log.contains("disarmed"))
        #expect(loop.openHandleCountFromOutside() == 0)
        loop.shutdown()
    }

    @Test func workDeferredFromAJobRunsWithoutWaitingForAnotherEvent() throws {
        let loop = try EventLoop(name: "test.loop.deferred")
        let done = DispatchSemaphore(value: 0)
        loop.execute { loop.runAfterIO { loop.runAfterIO { done.signal() } } }
        #expect(done.wait(timeout: .now() + 2) == .success)
        loop.shutdown()
    }

    @Test func emptyWakeUpsAreHarmless() throws {
        let loop = try EventLoop(name: "test.loop.empty")
        // Many jobs queued at once coalesce into fewer wake-ups; a drained queue must not trip it.
        let count = Mutex(0)
        for _ in 0..<10_000 { loop.execute { count.withLock { $0 += 1 } } }
        let done = DispatchSemaphore(value: 0)
        loop.execute { done.signal() }
        done.wait()
        #expect(count.withLock { $0 } == 10_000)
        loop.shutdown()
    }
}

@Suite(.tags(.loopback)) struct WorkerPoolTests {
    @Test func runsEveryJobOffTheCallerAndShutsDownAfterDraining() {
        let pool = WorkerPool(threads: 3, name: "test.workers")
        let ran = Mutex(0)
        let threads = Mutex(Set<UInt>())
        let caller = UInt(pthread_self())
        for _ in 0..<1_000 {
            pool.submit {
                ran.withLock { $0 += 1 }
                threads.withLock { _ = $0.insert(UInt(pthread_self())) }
            }
        }
        pool.shutdown()
        #expect(ran.withLock { $0 } == 1_000)
        let used = threads.withLock { $0 }
        #expect(!used.contains(caller))
        #expect((1...3).contains(used.count))
    }
}

@Suite(.tags(.loopback)) struct DNSResolverTests {
    private func resolve(_ host: String, port: Int = 80, on loop: EventLoop, resolver: LoopBound<DNSResolver>) -> Result<[SocketAddress], TransportError>? {
        let result = Mutex<Result<[SocketAddress], TransportError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        loop.execute {
            resolver.value.resolve(host: host, port: port) { answer in
                result.withLock { $0 = answer }
                done.signal()
            }
        }
        _ = done.wait(timeout: .now() + 10)
        return result.withLock { $0 }
    }

    @Test func numericHostsSkipTheResolverAndNamesResolve() throws {
        let loop = try EventLoop(name: "test.loop.dns")
        let resolver = LoopBound(DNSResolver(loop: loop, ttlMilliseconds: 30_000), loop: loop)
        let v4 = try #require(try resolve("127.0.0.1", port: 8080, on: loop, resolver: resolver)?.get())
        #expect(v4.map(\.description) == ["127.0.0.1:8080"])
        let v6 = try #require(try resolve("::1", port: 443, on: loop, resolver: resolver)?.get())
        #expect(v6.map(\.description) == ["[::1]:443"])
        let local = try #require(try resolve("localhost", port: 81, on: loop, resolver: resolver)?.get())
        #expect(local.contains { $0.description == "127.0.0.1:81" || $0.description == "[::1]:81" })
        guard case .failure(let error)? = resolve("no-such-host.invalid", on: loop, resolver: resolver) else {
            Issue.record("an .invalid host resolved")
            return
        }
        #expect(NetworkingError(error).code == .dnsFailure)
        loop.shutdown()
    }
}
