import Dispatch
import Foundation
import Synchronization
import Testing
@testable import UVNetworking

/// The manager's task registry without sockets: tasks are registered from many threads at once,
/// removed in batches, and listed exactly.
@Suite(.tags(.loopback)) struct TaskRegistryTests {
    private func makeTasks(_ count: Int, _ manager: SessionManager, from first: Int = 1000) -> [DataTask] {
        (0..<count).map { index in
            DataTask(identifier: first + index, request: Request(url: URL(string: "http://example.com/\(index)")!), manager: manager,
                     uploadProgress: nil, downloadProgress: nil, completionHandler: nil)
        }
    }

    @Test func registeredFromManyThreadsListedInOrderRemovedOnce() {
        let manager = SessionManager()
        defer { manager.invalidateSessionCancelingTasks(true, resetSession: false) }
        let registry = TaskRegistry()
        let tasks = makeTasks(400, manager)
        DispatchQueue.concurrentPerform(iterations: 8) { slice in
            for index in stride(from: slice, to: tasks.count, by: 8) { registry.register(tasks[index]) }
        }
        #expect(registry.all.map(\.taskIdentifier) == tasks.map(\.taskIdentifier))
        // Every other task removed, in a batch, while newcomers arrive from another thread.
        let late = makeTasks(50, manager, from: 5000)
        DispatchQueue.concurrentPerform(iterations: 2) { side in
            if side == 0 {
                registry.remove(stride(from: 0, to: tasks.count, by: 2).map { tasks[$0] }) { Unmanaged.passUnretained($0) }
            } else {
                for task in late { registry.register(task) }
            }
        }
        // Removing again changes nothing.
        registry.remove(tasks[0])
        let expected = stride(from: 1, to: tasks.count, by: 2).map { tasks[$0].taskIdentifier } + late.map(\.taskIdentifier)
        #expect(registry.all.map(\.taskIdentifier) == expected.sorted())
        registry.remove(tasks) { Unmanaged.passUnretained($0) }
        registry.remove(late) { Unmanaged.passUnretained($0) }
        #expect(registry.all.isEmpty)
    }

    @Test func aTaskRemovedBeforeItWasEverListedIsGone() {
        let manager = SessionManager()
        defer { manager.invalidateSessionCancelingTasks(true, resetSession: false) }
        let registry = TaskRegistry()
        let tasks = makeTasks(3, manager)
        for task in tasks { registry.register(task) }
        // Still among the newcomers: removal settles them first.
        registry.remove(tasks[1])
        #expect(registry.all.map(\.taskIdentifier) == [tasks[0].taskIdentifier, tasks[2].taskIdentifier])
    }

    @Test func aCompletedTaskIsNotListedBeforeItsBatchIsRemoved() {
        let manager = SessionManager()
        defer { manager.invalidateSessionCancelingTasks(true, resetSession: false) }
        let registry = TaskRegistry()
        let tasks = makeTasks(2, manager)
        for task in tasks { registry.register(task) }
        tasks[0].recordCompletion(error: nil)
        #expect(registry.all.map(\.taskIdentifier) == [tasks[1].taskIdentifier])
    }

    @Test func theRegistryReleasesWhatItHeld() {
        let manager = SessionManager()
        defer { manager.invalidateSessionCancelingTasks(true, resetSession: false) }
        weak var listed: DataTask?
        weak var newcomer: DataTask?
        do {
            let registry = TaskRegistry()
            var tasks = makeTasks(2, manager)
            listed = tasks[0]
            newcomer = tasks[1]
            registry.register(tasks[0])
            _ = registry.all
            registry.register(tasks[1])
            registry.remove(tasks[0])
            tasks.removeAll()
            #expect(listed == nil)
            #expect(newcomer != nil)
        }
        #expect(newcomer == nil)
    }
}
