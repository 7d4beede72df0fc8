import Dispatch
import Foundation
import Synchronization
import Testing
@testable import UVNetworking

@Suite(.tags(.loopback)) struct TaskHookStateTests {
    @Test func channelKeepsOrderOnAConcurrentQueueOneCallAtATime() {
        let manager = SessionManager()
        defer { manager.invalidateSessionCancelingTasks(true, resetSession: false) }
        manager.completionQueue = DispatchQueue(label: "uvnetworking.tests.channel", attributes: .concurrent)
        let group = DispatchGroup()
        manager.completionGroup = group
        let channel = HookChannel()
        let seen = Mutex<[Int]>([])
        let running = Atomic<Int>(0)
        let overlapped = Atomic<Bool>(false)
        for index in 0..<2000 {
            channel.send(through: manager) {
                if running.add(1, ordering: .sequentiallyConsistent).newValue > 1 { overlapped.store(true, ordering: .relaxed) }
                seen.withLock { $0.append(index) }
                running.subtract(1, ordering: .sequentiallyConsistent)
            }
        }
        #expect(group.wait(timeout: .now() + 10) == .success)
        #expect(seen.withLock { $0 } == Array(0..<2000))
        let didOverlap = overlapped.load(ordering: .relaxed)
        #expect(!didOverlap)
    }

    @Test func metricsSpanStartToEnd() throws {
        let state = TaskHookState(madeAtStart: true)
        Thread.sleep(forTimeInterval: 0.01)
        let metrics = try #require(state.ended().metrics)
        #expect(metrics.taskInterval.duration >= 0.009)
        #expect(metrics.redirectCount == 0)
        #expect(metrics.isReusedConnection == nil)
        // A state made later (a hook set while the task ran) did not see the start: no metrics.
        #expect(TaskHookState().ended().metrics == nil)
    }
}
