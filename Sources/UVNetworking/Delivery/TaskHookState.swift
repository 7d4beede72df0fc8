import Dispatch
import Foundation
import Synchronization

/// Runs one task's hook calls on the completion queue in the order the loop sent them: at most
/// one drain is in flight, and it takes whatever arrived while it ran, so a slow closure makes
/// calls queue up (unbounded) rather than run out of order or concurrently. Any thread.
final class HookChannel: Sendable {
    private struct Pending: ~Copyable {
        var work: [@Sendable () -> Void] = []
        var draining = false
    }

    private let pending = Mutex(Pending())

    /// Queues `work`; starts a drain on the manager's completion queue, inside its completion
    /// group, unless one is in flight. With `deliversOnEventLoop`, on `task`'s loop (the
    /// manager's first loop without a task).
    func send(through manager: SessionManager, for task: SessionTask? = nil, _ work: @escaping @Sendable () -> Void) {
        let start = pending.withLock { pending -> Bool in
            pending.work.append(work)
            guard !pending.draining else { return false }
            pending.draining = true
            return true
        }
        guard start else { return }
        let target = task.map { manager.deliveryQueue(on: manager.loop(for: $0)) } ?? manager.deliveryQueue()
        target.queue.async(group: target.group) { self.drain() }
    }

    private func drain() {
        while true {
            let batch = pending.withLock { pending -> [@Sendable () -> Void] in
                if pending.work.isEmpty { pending.draining = false }
                var taken: [@Sendable () -> Void] = []
                swap(&taken, &pending.work)
                return taken
            }
            if batch.isEmpty { return }
            for work in batch { work() }
        }
    }
}

/// A task's hook bookkeeping, made only when a hook or notifications were on as the task started
/// (or when a hook first needs it). Its fields are the loop's until the task finishes, then go
/// with the finished task to the worker; `channel` is thread-safe.
final class TaskHookState: @unchecked Sendable {
    // @unchecked: loop-confined until handed over with the finished task, never touched after.
    let startDate = Date()
    /// Made as the task started (so `startDate` is its start), not later by a hook set meanwhile.
    let madeAtStart: Bool
    var endDate: Date?
    var isReusedConnection: Bool?
    var tls: TLSMetrics?
    var redirectCount = 0
    /// Finished exchanges, and the one in flight (TaskRunner+Metrics.swift).
    var transactions: [TransactionMetrics] = []
    var transaction: TransactionMetrics?
    /// Body bytes that arrived while `dataTaskDidReceiveResponse` held the response (the
    /// runner's machine says when it does), delivered once it allows it.
    var heldChunks: [[UInt8]] = []
    /// Body bytes already reported to `taskDidSendBodyData`.
    var reportedBytesSent: Int64 = 0
    private(set) var channel: HookChannel?

    init(madeAtStart: Bool = false) {
        self.madeAtStart = madeAtStart
    }

    /// The task's channel, made on first use.
    var sendingChannel: HookChannel {
        if let channel { return channel }
        let made = HookChannel()
        channel = made
        return made
    }

    /// Stamps the end; returns self.
    func ended() -> TaskHookState {
        endDate = Date()
        return self
    }

    /// The task's metrics; nil unless measured from its start.
    var metrics: TaskMetrics? {
        guard madeAtStart else { return nil }
        let end = max(endDate ?? startDate, startDate)
        return TaskMetrics(taskInterval: DateInterval(start: startDate, end: end), redirectCount: redirectCount,
                           isReusedConnection: isReusedConnection, tls: tls, transactions: transactions)
    }
}
