import DequeModule
import Foundation

/// A fixed set of threads of our own for work that must not run on the loop thread: response
/// serialization and, later, trust evaluation. libuv's threadpool is not used: DNS runs there and
/// is small (4 threads), and CPU-bound work would starve it.
public final class WorkerPool: @unchecked Sendable {
    // @unchecked: `jobs` and `stopping` are guarded by `condition`.

    /// The pool every session uses unless it is given another.
    public static let shared = WorkerPool(threads: max(2, ProcessInfo.processInfo.activeProcessorCount))

    private let condition = NSCondition()
    private var jobs = Deque<@Sendable () -> Void>()
    private var stopping = false
    private var threads: [Thread] = []
    private var running = 0
    private let allStopped = DispatchSemaphore(value: 0)

    /// Starts `threads` worker threads.
    public init(threads count: Int, name: String = "uvnetworking.worker") {
        precondition(count > 0, "a worker pool needs at least one thread")
        running = count
        for index in 0..<count {
            let thread = Thread { [unowned self] in self.work() }
            thread.name = "\(name).\(index)"
            threads.append(thread)
            thread.start()
        }
    }

    /// Runs `job` on one of the pool's threads. Jobs start in submission order.
    public func submit(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        precondition(!stopping, "job submitted to a stopped worker pool")
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func work() {
        while true {
            condition.lock()
            while jobs.isEmpty && !stopping { condition.wait() }
            guard let job = jobs.popFirst() else {
                running -= 1
                let last = running == 0
                condition.unlock()
                if last { allStopped.signal() }
                return
            }
            condition.unlock()
            job()
        }
    }

    /// Runs what is queued, then stops every thread and waits for them.
    public func shutdown() {
        condition.lock()
        guard !stopping else { condition.unlock(); return }
        stopping = true
        condition.broadcast()
        condition.unlock()
        allStopped.wait()
        threads.removeAll()
    }
}
