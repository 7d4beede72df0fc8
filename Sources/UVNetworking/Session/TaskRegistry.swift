import Synchronization

/// A manager's tasks created and not yet completed (`SessionManager.tasks`), as an intrusive
/// list: the links live in the tasks, so listing a task costs no hashing and no allocation.
///
/// A task is registered on the caller's thread with one compare-and-swap onto a stack of newcomers
/// (no lock, so a caller never waits for the loop, nor the loop for a caller). The loop removes
/// the tasks of a finished batch under one lock per batch; the lock also moves the newcomers into
/// the doubly-linked list they are removed from. Listing takes the same lock and leaves out tasks
/// already completed but not yet removed (their batch is on its way), so it is exact.
final class TaskRegistry: Sendable {
    /// Newcomers, the newest first, linked through `registryIncomingNext`; each holds one retain.
    private let incoming = Atomic<Unmanaged<SessionTask>?>(nil)
    private let list = Mutex(List())

    /// The doubly-linked list of settled tasks; it holds them strongly through `registryNext`.
    private struct List: ~Copyable {
        var head: SessionTask?
        var count = 0
    }

    /// Where a task is; read and written under the lock, except `.incoming`, written before the
    /// push that publishes the task.
    enum Membership: UInt8 { case none, incoming, listed, removed }

    deinit {
        // Newcomers never settled: drop their retains.
        var node = incoming.exchange(nil, ordering: .acquiring)
        while let current = node {
            node = current.takeUnretainedValue().registryIncomingNext
            current.release()
        }
    }

    /// Lists `task`. Any thread; lock-free.
    func register(_ task: SessionTask) {
        task.registryMembership = .incoming
        let node = Unmanaged.passRetained(task)
        var head = incoming.load(ordering: .relaxed)
        while true {
            task.registryIncomingNext = head
            let (exchanged, original) = incoming.compareExchange(expected: head, desired: node,
                                                                 successOrdering: .releasing, failureOrdering: .relaxed)
            if exchanged { return }
            head = original
        }
    }

    /// Removes `tasks` (each at most once; tasks already removed are skipped). Any thread.
    /// `task` names each element's task unretained: the caller holds them all meanwhile (a
    /// retain and a release per task saved).
    func remove<Tasks: Sequence>(_ tasks: Tasks, _ task: (Tasks.Element) -> Unmanaged<SessionTask>) {
        list.withLock { list in
            settleIncoming(&list)
            for element in tasks {
                task(element)._withUnsafeGuaranteedRef { unlink($0, &list) }
            }
        }
    }

    /// Removes one task. Any thread.
    func remove(_ task: SessionTask) {
        remove(CollectionOfOne(task)) { Unmanaged.passUnretained($0) }
    }

    /// The tasks not yet completed, by identifier.
    var all: [SessionTask] {
        var tasks = list.withLock { list -> [SessionTask] in
            settleIncoming(&list)
            var tasks: [SessionTask] = []
            tasks.reserveCapacity(list.count)
            var node = list.head
            while let task = node {
                if task.state != .completed { tasks.append(task) }
                node = task.registryNext
            }
            return tasks
        }
        tasks.sort { $0.taskIdentifier < $1.taskIdentifier }
        return tasks
    }

    /// Moves the newcomers into the list. Under the lock.
    private func settleIncoming(_ list: inout List) {
        guard incoming.load(ordering: .relaxed) != nil else { return }
        var node = incoming.exchange(nil, ordering: .acquiring)
        while let current = node {
            let task = current.takeRetainedValue()
            node = task.registryIncomingNext
            task.registryIncomingNext = nil
            task.registryMembership = .listed
            task.registryPrevious = nil
            list.head?.registryPrevious = current
            // The old head moves into the task's link, the task (the stack's retain) into the
            // head: nothing retained or released.
            task.registryNext = list.head.take()
            list.head = consume task
            list.count += 1
        }
    }

    /// Takes `task` out of the list. Under the lock, after `settleIncoming`.
    private func unlink(_ task: SessionTask, _ list: inout List) {
        guard task.registryMembership == .listed else {
            // Never registered (made by hand in tests), or removed already.
            if task.registryMembership == .none { task.registryMembership = .removed }
            return
        }
        task.registryMembership = .removed
        // The task's link to the next one moves to where the task was linked from, which lets
        // the task go: one release, nothing retained.
        let previous = task.registryPrevious
        task.registryPrevious = nil
        let next = task.registryNext.take()
        next?.registryPrevious = previous
        if let previous {
            previous._withUnsafeGuaranteedRef { $0.registryNext = consume next }
        } else {
            list.head = consume next
        }
        list.count -= 1
    }
}
