import DequeModule
import Foundation
import Synchronization

/// A fixed set of threads of our own for work that must not run on the loop thread: response
/// serialization and, later, trust evaluation. libuv's threadpool is not used: DNS runs there and
/// is small (4 threads), and CPU-bound work would starve it.
///
/// Lifecycle: `shutdown()` (synchronous, or `await shutdown()`) runs what is queued, then stops
/// the threads. Afterwards `submit` refuses jobs (returns false), tasks started on a session
/// that uses the pool fail with `NetworkingError.Code.loopShutDown`, and the library's own work
/// for tasks that were already running (their completions above all) runs on Dispatch's global
/// queue instead, so those tasks still complete exactly once.
public final class WorkerPool: @unchecked Sendable {
    // @unchecked: `jobs`, `stopping`, `running` and `stopWaiters` are guarded by `condition`.

    /// The pool every session uses unless it is given another.
    public static let shared = WorkerPool(threads: max(2, ProcessInfo.processInfo.activeProcessorCount))

    private let condition = NSCondition()
    private var jobs = Deque<@Sendable () -> Void>()
    private var stopping = false
    private var running = 0
    /// Called once every thread has stopped (sync and async shutdowns).
    private var stopWaiters: [@Sendable () -> Void] = []
    /// Set once `shutdown` began: read without the lock on the task-start path.
    private let refusing = Atomic<Bool>(false)
    /// Marks this pool's threads (their thread dictionary holds the pool), so a shutdown from one
    /// of them does not wait for itself, and a pool dropped without shutdown stays alive for its
    /// threads instead of being freed under them.
    private let threadKey = "uvnetworking.workerpool"

    /// Starts `threads` worker threads.
    public init(threads count: Int, name: String = "uvnetworking.worker") {
        precondition(count > 0, "a worker pool needs at least one thread")
        running = count
        for index in 0..<count {
            let thread = Thread { [unowned self] in self.work() }
            thread.name = "\(name).\(index)"
            thread.threadDictionary[threadKey] = self
            thread.start()
        }
    }

    /// Whether `shutdown` has been called: jobs are refused from then on.
    public var isShutDown: Bool { refusing.load(ordering: .acquiring) }

    /// Runs `job` on one of the pool's threads. Jobs start in submission order. Returns false,
    /// and drops the job, once the pool has been shut down.
    @discardableResult
    public func submit(_ job: @escaping @Sendable () -> Void) -> Bool {
        condition.lock()
        guard !stopping else {
            condition.unlock()
            return false
        }
        jobs.append(job)
        condition.signal()
        condition.unlock()
        return true
    }

    /// The library's own submissions: work that a running task's completion depends on. After
    /// shutdown it runs on Dispatch's global queue, so the task still ends exactly once.
    func run(_ job: @escaping @Sendable () -> Void) {
        if !submit(job) { DispatchQueue.global().async(execute: job) }
    }

    private func work() {
        while true {
            condition.lock()
            while jobs.isEmpty && !stopping { condition.wait() }
            guard let job = jobs.popFirst() else {
                running -= 1
                let waiters = running == 0 ? stopWaiters : []
                if running == 0 { stopWaiters.removeAll() }
                condition.unlock()
                for waiter in waiters { waiter() }
                return
            }
            condition.unlock()
            job()
        }
    }

    /// Whether the caller is one of this pool's threads.
    private var onPoolThread: Bool {
        (Thread.current.threadDictionary[threadKey] as? WorkerPool) === self
    }

    /// Stops taking jobs, lets the queued ones run, and calls `stopped` once every thread ended
    /// (at once when that already happened).
    private func stop(then stopped: @escaping @Sendable () -> Void) {
        condition.lock()
        refusing.store(true, ordering: .releasing)
        stopping = true
        condition.broadcast()
        let alreadyStopped = running == 0
        if !alreadyStopped { stopWaiters.append(stopped) }
        condition.unlock()
        if alreadyStopped { stopped() }
    }

    /// Runs what is queued, then stops every thread and waits for them. Idempotent. Called from
    /// one of the pool's own jobs, it stops the pool without waiting (a thread cannot wait for
    /// itself). Debug builds trap when it is called on an event loop's thread, which it would
    /// stall while the queued work runs.
    public func shutdown() {
        if onPoolThread {
            stop {}
            return
        }
        EventLoop.assertNotOnLoopThread("WorkerPool.shutdown()")
        let done = DispatchSemaphore(value: 0)
        stop { done.signal() }
        done.wait()
    }

    /// Runs what is queued, then stops every thread; returns once they all ended, without
    /// blocking a thread meanwhile. Idempotent. In an async context `shutdown()` names this
    /// overload; the blocking one is for synchronous code.
    public func shutdown() async {
        if onPoolThread {
            stop {}
            return
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            stop { continuation.resume() }
        }
    }
}
