import CUV
import Foundation
import Synchronization

/// A libuv loop on a thread of its own. Every connection, timer and DNS query lives here.
///
/// Thread rules: state owned by the loop is touched only on its thread (`assertInLoop` checks it in
/// debug builds). Other threads reach the loop only through `execute`, which goes through one
/// MPSC queue and one `uv_async_t`.
public final class EventLoop: @unchecked Sendable {
    // @unchecked: `uv` and the handles are touched only on the loop thread (after `init` returns);
    // the job queue and the state flags are the thread-safe parts.

    /// The loop every session uses unless it is given another. It lives as long as the process.
    public static let shared = EventLoop(name: "uvnetworking.loop")

    let uv: UnsafeMutablePointer<uv_loop_t>
    private let wakeup: UnsafeMutablePointer<uv_async_t>
    private let jobs = JobQueue()
    private let state = Mutex<RunState>(.starting)
    private var thread: Thread?
    private let started = DispatchSemaphore(value: 0)
    private let stopped = DispatchSemaphore(value: 0)
    nonisolated(unsafe) private var loopThreadID: pthread_t?

    /// One read buffer for every stream on this loop: a read callback consumes its bytes before
    /// returning, so the buffer is free again for the next one.
    let readBuffer: UnsafeMutableRawBufferPointer

    /// Functions run once per loop iteration after I/O (uv_check), used to batch work.
    private var checkHandle: UnsafeMutablePointer<uv_check_t>
    /// Active only while after-I/O work is pending: an active idle handle makes libuv poll with a
    /// zero timeout, so work deferred from a timer or a job runs in this iteration, not after the
    /// next unrelated event.
    private var idleHandle: UnsafeMutablePointer<uv_idle_t>
    private var afterIOCallbacks: [() -> Void] = []

    private enum RunState { case starting, running, stopping, stopped }

    /// Creates the loop and starts its thread.
    public init(name: String = "uvnetworking.loop") {
        uv = .allocate(capacity: 1)
        precondition(uv_loop_init(uv) == 0, "uv_loop_init failed")
        wakeup = .allocate(capacity: 1)
        checkHandle = .allocate(capacity: 1)
        idleHandle = .allocate(capacity: 1)
        readBuffer = .allocate(byteCount: 64 * 1024, alignment: 16)
        uv.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        wakeup.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        checkHandle.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        uv_async_init(uv, wakeup) { handle in
            EventLoop.from(handle!.pointee.data).runJobs()
        }
        uv_idle_init(uv, idleHandle)
        uv_check_init(uv, checkHandle)
        // The check handle must not keep the loop alive on its own.
        uv_unref(UnsafeMutableRawPointer(checkHandle).assumingMemoryBound(to: uv_handle_t.self))
        uv_check_start(checkHandle) { handle in
            EventLoop.from(handle!.pointee.data).runAfterIO()
        }
        let thread = Thread { [unowned self] in self.run() }
        thread.name = name
        thread.stackSize = 1 << 20
        self.thread = thread
        thread.start()
        started.wait()
    }

    private static func from(_ data: UnsafeMutableRawPointer?) -> EventLoop {
        Unmanaged<EventLoop>.fromOpaque(data!).takeUnretainedValue()
    }

    private func run() {
        // A write to a socket the peer has closed raises SIGPIPE in the writing thread, which
        // would kill the process; libuv writes with write(2), so MSG_NOSIGNAL is not an option.
        // Blocked on this thread (the only one that writes sockets), the write just fails with
        // EPIPE, and the process's own signal disposition is left alone.
        var blocked = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &blocked, nil)
        loopThreadID = pthread_self()
        state.withLock { $0 = .running }
        started.signal()
        uv_run(uv, UV_RUN_DEFAULT)
        // uv_run returns only once every handle is closed (see `shutdown`).
        uv_loop_close(uv)
        state.withLock { $0 = .stopped }
        stopped.signal()
    }

    /// Whether the caller is on this loop's thread.
    public var inLoop: Bool {
        guard let id = loopThreadID else { return false }
        return pthread_equal(id, pthread_self()) != 0
    }

    /// Traps in debug builds when called off the loop thread: loop-owned state is not thread-safe.
    @inline(__always)
    func assertInLoop(file: StaticString = #fileID, line: UInt = #line) {
        assert(inLoop, "loop-owned state touched off the loop thread", file: file, line: line)
    }

    /// Runs `job` on the loop thread. Jobs run in the order they were submitted. Returns false (and
    /// drops the job) once the loop has been shut down.
    @discardableResult
    public func execute(_ job: @escaping @Sendable () -> Void) -> Bool {
        let accepting = state.withLock { $0 == .running || $0 == .starting }
        guard accepting else { return false }
        if jobs.push(job) {
            uv_async_send(wakeup)
        }
        return true
    }

    private func runJobs() {
        // Jobs queued while these run get their own wake-up: push() saw an empty queue.
        for job in jobs.drain() { job() }
    }

    /// Schedules `body` to run on the loop thread after the current iteration's I/O callbacks.
    /// Used to batch per-iteration work (completions) into one hand-off.
    func runAfterIO(_ body: @escaping () -> Void) {
        assertInLoop()
        if afterIOCallbacks.isEmpty {
            uv_idle_start(idleHandle) { _ in }
        }
        afterIOCallbacks.append(body)
    }

    private func runAfterIO() {
        guard !afterIOCallbacks.isEmpty else { return }
        let callbacks = afterIOCallbacks
        afterIOCallbacks.removeAll(keepingCapacity: true)
        for callback in callbacks { callback() }
        if afterIOCallbacks.isEmpty { uv_idle_stop(idleHandle) }
    }

    /// The number of open handles other than the loop's own (wake-up, check and idle handles). Tests use
    /// it to prove that nothing leaked. Must be called on the loop thread.
    func openHandleCount() -> Int {
        assertInLoop()
        var count = 0
        withUnsafeMutablePointer(to: &count) { countPointer in
            uv_walk(uv, { handle, arg in
                guard let handle, uv_is_closing(handle) == 0 else { return }
                let loop = EventLoop.from(handle.pointee.loop.pointee.data)
                let raw = UnsafeMutableRawPointer(handle)
                if raw == UnsafeMutableRawPointer(loop.wakeup) || raw == UnsafeMutableRawPointer(loop.checkHandle)
                    || raw == UnsafeMutableRawPointer(loop.idleHandle) { return }
                arg!.assumingMemoryBound(to: Int.self).pointee += 1
            }, countPointer)
        }
        return count
    }

    /// Asks the loop, from any thread but its own, how many handles are open. Waits for the answer.
    public func openHandleCountFromOutside() -> Int {
        precondition(!inLoop, "would deadlock on the loop thread")
        let result = Mutex(0)
        let done = DispatchSemaphore(value: 0)
        execute {
            let count = self.openHandleCount()
            result.withLock { $0 = count }
            done.signal()
        }
        done.wait()
        return result.withLock { $0 }
    }

    /// Closes every handle, lets their close callbacks run, stops the thread and waits for it.
    /// Handles owned by sessions are closed by force: invalidate sessions first to complete their
    /// tasks properly. Must not be called on the loop thread.
    public func shutdown() {
        precondition(!inLoop, "shutdown() would join the loop thread from itself")
        let shouldStop = state.withLock { state -> Bool in
            guard state == .running else { return false }
            return true
        }
        guard shouldStop else { return }
        if jobs.push({ [self] in self.closeEverything() }) { uv_async_send(wakeup) }
        state.withLock { $0 = .stopping }
        stopped.wait()
        thread = nil
    }

    private func closeEverything() {
        runJobs()
        uv_walk(uv, { handle, _ in
            guard let handle, uv_is_closing(handle) == 0 else { return }
            uv_close(handle, nil)
        }, nil)
    }

    deinit {
        // Only reached for loops that were shut down (the shared loop lives forever).
        wakeup.deallocate()
        checkHandle.deallocate()
        idleHandle.deallocate()
        readBuffer.deallocate()
        uv.deallocate()
    }
}
