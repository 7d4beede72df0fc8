import BenchSupport
import CAllocCounter
import Dispatch
import Foundation
@_spi(Testing) import UVNetworking

/// What one idle keep-alive connection costs the client's heap: a manager opens `connections`
/// connections to one origin at once (that many tasks in flight, no idle connection to reuse),
/// lets them go idle, and the heap in use (glibc's `mallinfo2`, every thread's arena) is read
/// before and after. Kernel memory (socket buffers) is not counted: it is the same for any client.
struct IdleMemory {
    var connections: Int
    var heapBytes: Int

    var bytesPerConnection: Double { Double(heapBytes) / Double(max(1, connections)) }

    /// The markdown section `make bench` appends to its summary.
    func markdown(goal: Double) -> String {
        let verdict = bytesPerConnection <= goal ? "met" : "missed"
        return """
        ### Memory of an idle plain connection

        \(connections) keep-alive connections to the private nginx, opened at once and left idle: \
        \(formatRate(Double(heapBytes))) bytes of client heap in all (glibc `mallinfo2`, in use after \
        minus before), **\(String(format: "%.0f", bytesPerConnection)) bytes per connection** \
        (goal ≤ \(String(format: "%.0f", goal)) bytes: \(verdict)). Socket buffers in the kernel are not counted.

        """
    }

    /// Opens the connections with a fresh manager, measures, and closes them again.
    static func measure(url: URL, connections: Int) throws -> IdleMemory {
        var configuration = SessionConfiguration()
        configuration.maximumConnectionsPerHost = connections
        let manager = SessionManager(configuration: configuration)
        manager.responseSerializer = HTTPResponseSerializer()
        let queue = DispatchQueue(label: "uvbench.idle")
        manager.completionQueue = queue
        defer { manager.invalidateSessionCancelingTasks(true, resetSession: false) }

        // One request first, so that the loop, the engine, the pool and their buffers exist
        // before the baseline is read; its connection is one of those counted below.
        try fetch(manager, url: url, count: 1)
        let before = heapInUse()
        try fetch(manager, url: url, count: connections)
        let after = settledHeapInUse()
        let opened = manager.openConnectionCount
        guard opened > 1 else { throw InvalidRun(firstError: "only \(opened) connection(s) opened", errors: 1) }
        // The first request's connection was there before the baseline.
        return IdleMemory(connections: opened - 1, heapBytes: after - before)
    }

    /// Runs `count` GETs at once and waits until every one has completed.
    private static func fetch(_ manager: SessionManager, url: URL, count: Int) throws {
        let group = DispatchGroup()
        let failures = Failures()
        let tasks = (0..<count).map { _ in
            group.enter()
            return manager.dataTask(with: Request(url: url), completionHandler: { response, _, error in
                if let error { failures.note("\(error)") } else if response?.status.code != 200 { failures.note("status \(response?.status.code ?? 0)") }
                group.leave()
            })
        }
        // Resumed together, so that none finds an idle connection to reuse.
        for task in tasks { task.resume() }
        group.wait()
        if let first = failures.first { throw InvalidRun(firstError: first, errors: failures.count) }
    }

    private static func heapInUse() -> Int { Int(uvbench_heap_in_use()) }

    /// The heap once the threads that delivered the completions have let go of what the tasks
    /// held (a loop iteration's batch, a worker's response): the smallest of a few readings
    /// 20 ms apart, so a reading taken while a batch is still being freed does not count it.
    private static func settledHeapInUse() -> Int {
        var smallest = heapInUse()
        for _ in 0..<10 {
            Thread.sleep(forTimeInterval: 0.02)
            smallest = min(smallest, heapInUse())
        }
        return smallest
    }
}

/// Errors seen by completion handlers (any thread).
private final class Failures: @unchecked Sendable {
    private let lock = NSLock()
    private var noted: (count: Int, first: String?) = (0, nil)

    var count: Int { lock.withLock { noted.count } }
    var first: String? { lock.withLock { noted.first } }

    func note(_ description: String) {
        lock.withLock {
            noted.count += 1
            if noted.first == nil { noted.first = description }
        }
    }
}
