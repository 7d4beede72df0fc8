import CUV
import Foundation
import Synchronization

/// A libuv loop on a thread of its own. Every connection, timer and DNS query lives here.
///
/// Thread rules: state owned by the loop is touched only on its thread (`assertInLoop` checks it in
/// debug builds). Other threads reach the loop only through `execute`, which goes through one
/// MPSC queue and one `uv_async_t`.
///
/// Lifecycle: `init` throws when libuv cannot start a loop (too few file descriptors, say).
/// `shutdown()` (synchronous, or `await shutdown()`) runs the jobs already submitted, ends every
/// task still running on the loop with `NetworkingError.Code.loopShutDown`, closes every
/// connection and handle, and stops the thread. Afterwards `execute` refuses jobs and tasks
/// resumed on sessions of this loop complete with `.loopShutDown`. To let running tasks finish
/// instead, shut their sessions down first (`SessionManager.shutdown()`).
public final class EventLoop: @unchecked Sendable {
    // @unchecked: `uv` and the handles are touched only on the loop thread (after `init` returns);
    // the job queue and the state are the thread-safe parts.

    /// The loop every session uses unless it is given another. It lives as long as the process.
    /// If it cannot start (see `init`), it is born shut down: tasks on it complete with
    /// `.loopShutDown`, whose detail says why, and `startFailure` holds the error.
    public static let shared: EventLoop = {
        do throws(NetworkingError) {
            return try EventLoop(name: "uvnetworking.loop")
        } catch {
            return EventLoop(failedToStart: error)
        }
    }()

    /// Why the loop could not start; nil for a loop that started (every loop `init` returns).
    public let startFailure: NetworkingError?

    let uv: UnsafeMutablePointer<uv_loop_t>
    private let wakeup: UnsafeMutablePointer<uv_async_t>
    private let jobs = JobQueue()
    private let state = Mutex(StateBox())
    /// The name the loop was made with (for diagnostics: its thread, made by libuv, carries no
    /// name of its own).
    public let name: String
    private let started = DispatchSemaphore(value: 0)
    nonisolated(unsafe) private var loopThreadID: pthread_t?

    /// One read buffer for every stream on this loop: a read callback consumes its bytes before
    /// returning, so the buffer is free again for the next one.
    let readBuffer: UnsafeMutableRawBufferPointer
    /// Scratch for bytes produced on the loop and written at once (TLS records): a transport's
    /// write copies what the socket does not take, so the buffer is free again when it returns.
    let writeScratch: UnsafeMutableRawBufferPointer

    /// Functions run once per loop iteration after I/O (uv_check), used to batch work.
    private var checkHandle: UnsafeMutablePointer<uv_check_t>
    /// Active only while after-I/O work is pending: an active idle handle makes libuv poll with a
    /// zero timeout, so work deferred from a timer or a job runs in this iteration, not after the
    /// next unrelated event.
    private var idleHandle: UnsafeMutablePointer<uv_idle_t>
    /// In a struct, so that storing one allocates nothing (see `JobQueue.Entry`).
    private struct AfterIO { let run: () -> Void }
    private var afterIOCallbacks: [AfterIO] = []
    private var spareAfterIO: [AfterIO] = []
    /// Who must end their work when the loop shuts down (sessions' engines). Loop thread only.
    private var shutdownObservers: [ObjectIdentifier: () -> Void] = [:]

    private enum RunState { case starting, running, stopping, stopped }
    private struct StateBox {
        var run = RunState.starting
        /// Called once the thread has stopped (by `shutdown` callers waiting for it).
        var stopWaiters: [@Sendable () -> Void] = []
    }

    /// Creates the loop and starts its thread.
    /// - Throws: `NetworkingError` with code `.loopShutDown` when libuv cannot create the loop
    ///   or its wake-up handle (usually: no file descriptor left, EMFILE), or its thread (a
    ///   thread limit reached, no memory for the stack: EAGAIN).
    public init(name: String = "uvnetworking.loop") throws(NetworkingError) {
        self.name = name
        uv = .allocate(capacity: 1)
        wakeup = .allocate(capacity: 1)
        checkHandle = .allocate(capacity: 1)
        idleHandle = .allocate(capacity: 1)
        readBuffer = .allocate(byteCount: 64 * 1024, alignment: 16)
        writeScratch = .allocate(byteCount: 64 * 1024, alignment: 16)
        startFailure = nil
        let loopStatus = uv_loop_init(uv)
        guard loopStatus == 0 else {
            // deinit frees the memory; nothing of libuv's is left to close.
            state.withLock { $0.run = .stopped }
            // This init is public API: the loop's own error becomes the public one here.
            throw NetworkingError(LoopStartError(call: "uv_loop_init", status: loopStatus))
        }
        uv.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        wakeup.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        checkHandle.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        let asyncStatus = uv_async_init(uv, wakeup) { handle in
            EventLoop.from(handle!.pointee.data).runJobs()
        }
        guard asyncStatus == 0 else {
            uv_loop_close(uv)
            state.withLock { $0.run = .stopped }
            throw NetworkingError(LoopStartError(call: "uv_async_init", status: asyncStatus))
        }
        uv_idle_init(uv, idleHandle)
        uv_check_init(uv, checkHandle)
        // The check handle must not keep the loop alive on its own.
        uv_unref(UnsafeMutableRawPointer(checkHandle).assumingMemoryBound(to: uv_handle_t.self))
        uv_check_start(checkHandle) { handle in
            EventLoop.from(handle!.pointee.data).runAfterIO()
        }
        // libuv's thread call, not Foundation's Thread: it says when the thread cannot be made
        // (no memory for its stack, a thread limit), where Thread.start would leave `started`
        // waited for forever.
        var options = uv_thread_options_t()
        options.flags = UInt32(UV_THREAD_HAS_STACK_SIZE.rawValue)
        options.stack_size = 1 << 20
        var thread = uv_thread_t()
        // Unretained, as the handles hold the loop: its owner keeps it while the thread runs.
        let threadStatus = uv_thread_create_ex(&thread, &options, { raw in
            EventLoop.from(raw).run()
        }, Unmanaged.passUnretained(self).toOpaque())
        guard threadStatus == 0 else {
            closeUnstartedLoop()
            throw NetworkingError(LoopStartError(call: "uv_thread_create_ex", status: threadStatus))
        }
        // Nobody joins it: `shutdown` waits for `run` to say the loop stopped.
        pthread_detach(thread)
        started.wait()
    }

    /// The handles `init` made, closed and the loop closed, when its thread could not start.
    private func closeUnstartedLoop() {
        for handle in [UnsafeMutableRawPointer(wakeup), UnsafeMutableRawPointer(idleHandle), UnsafeMutableRawPointer(checkHandle)] {
            uv_close(handle.assumingMemoryBound(to: uv_handle_t.self), nil)
        }
        // Runs the closes to their end (no callbacks), on this thread: no other has the loop.
        uv_run(uv, UV_RUN_DEFAULT)
        uv_loop_close(uv)
        state.withLock { $0.run = .stopped }
    }

    /// A loop that never started (`shared` when `init` failed): shut down from birth.
    private init(failedToStart error: NetworkingError) {
        uv = .allocate(capacity: 1)
        wakeup = .allocate(capacity: 1)
        checkHandle = .allocate(capacity: 1)
        idleHandle = .allocate(capacity: 1)
        readBuffer = .allocate(byteCount: 1, alignment: 16)
        writeScratch = .allocate(byteCount: 1, alignment: 16)
        startFailure = error
        name = "failed"
        state.withLock { $0.run = .stopped }
    }

    /// Why a task cannot run on this loop, for its `.loopShutDown` error.
    var shutDownDetail: String {
        startFailure?.detail ?? "the session's event loop has been shut down"
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
        Thread.current.threadDictionary[Self.loopThreadKey] = true
        state.withLock { $0.run = .running }
        started.signal()
        uv_run(uv, UV_RUN_DEFAULT)
        // uv_run returns only once every handle is closed (see `shutdown`). Taking the lock
        // waits out a uv_async_send still in progress (sends happen under it) before the loop's
        // descriptors close.
        let waiters = state.withLock { state -> [@Sendable () -> Void] in
            state.run = .stopped
            defer { state.stopWaiters.removeAll() }
            return state.stopWaiters
        }
        uv_loop_close(uv)
        for waiter in waiters { waiter() }
    }

    /// Whether the caller is on this loop's thread.
    public var inLoop: Bool {
        guard let id = loopThreadID else { return false }
        return pthread_equal(id, pthread_self()) != 0
    }

    /// Marks the threads that run loops (their thread dictionary), for the debug checks of
    /// blocking calls.
    private static let loopThreadKey = "uvnetworking.loop"

    /// Whether the caller is the thread of some event loop (this one or another).
    static var onAnyLoopThread: Bool {
        Thread.current.threadDictionary[loopThreadKey] != nil
    }

    /// Traps in debug builds when a call that blocks (`what`) is made on a loop thread: it would
    /// hold up every connection of that loop, or wait for the loop itself and never return. With
    /// `SessionManager.deliversOnEventLoop`, handlers run there and must not block.
    static func assertNotOnLoopThread(_ what: StaticString, file: StaticString = #fileID, line: UInt = #line) {
        assert(!onAnyLoopThread, "\(what) blocks, and was called on an event loop thread (handlers of a session that delivers on its event loop must not block)",
               file: file, line: line)
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
        // Pushed under the state lock: once shutdown switched the state, no job can slip in behind
        // the last one the loop runs. The wake-up too, so it never reaches a closed loop.
        state.withLock { state in
            guard state.run == .running || state.run == .starting else { return false }
            if jobs.push(job) { uv_async_send(wakeup) }
            return true
        }
    }

    /// Whether `shutdown` has begun (or the loop never started): jobs are refused.
    public var isShutDown: Bool {
        state.withLock { $0.run == .stopping || $0.run == .stopped }
    }

    /// Registers `body` to run on the loop thread when the loop shuts down, before its handles
    /// are closed (engines end their tasks and close their connections there). Loop thread only.
    func addShutdownObserver(_ owner: AnyObject, _ body: @escaping () -> Void) {
        assertInLoop()
        shutdownObservers[ObjectIdentifier(owner)] = body
    }

    /// Undoes `addShutdownObserver`. Loop thread only.
    func removeShutdownObserver(_ owner: AnyObject) {
        assertInLoop()
        shutdownObservers[ObjectIdentifier(owner)] = nil
    }

    /// The jobs of the current wake-up; its storage goes back to the queue at the next one.
    /// Loop thread only.
    private var drainedJobs: [JobQueue.Entry] = []

    private func runJobs() {
        // Jobs queued while these run get their own wake-up: push() saw an empty queue.
        jobs.drain(into: &drainedJobs)
        for job in drainedJobs { job.run() }
        drainedJobs.removeAll(keepingCapacity: true)
    }

    /// Schedules `body` to run on the loop thread after the current iteration's I/O callbacks.
    /// Used to batch per-iteration work (completions) into one hand-off.
    func runAfterIO(_ body: @escaping () -> Void) {
        assertInLoop()
        if afterIOCallbacks.isEmpty {
            uv_idle_start(idleHandle) { _ in }
        }
        afterIOCallbacks.append(AfterIO(run: body))
    }

    private func runAfterIO() {
        guard !afterIOCallbacks.isEmpty else { return }
        // The pending callbacks out, the previous iteration's emptied array in: no allocation.
        var callbacks: [AfterIO] = []
        swap(&callbacks, &spareAfterIO)
        swap(&callbacks, &afterIOCallbacks)
        for callback in callbacks { callback.run() }
        callbacks.removeAll(keepingCapacity: true)
        spareAfterIO = callbacks
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
    /// For tests that check nothing is left open (`@_spi(Testing) import UVNetworking`).
    @_spi(Testing)
    public func openHandleCountFromOutside() -> Int {
        precondition(!inLoop, "would deadlock on the loop thread")
        Self.assertNotOnLoopThread("EventLoop.openHandleCountFromOutside")
        let result = Mutex(0)
        let done = DispatchSemaphore(value: 0)
        let accepted = execute {
            let count = self.openHandleCount()
            result.withLock { $0 = count }
            done.signal()
        }
        // A loop that was shut down has closed every handle.
        guard accepted else { return 0 }
        done.wait()
        return result.withLock { $0 }
    }

    /// Shuts the loop down and waits for its thread to end: the jobs already submitted run, tasks
    /// still running end with `.loopShutDown` (their completions are delivered), every connection
    /// and handle is closed. Idempotent; later calls wait too. On the loop thread itself (from a
    /// job) it starts the shutdown and returns at once: the loop stops after that job. On the
    /// thread of another loop, debug builds trap: waiting there would stall that loop.
    public func shutdown() {
        guard !inLoop else {
            beginShutdown()
            return
        }
        Self.assertNotOnLoopThread("EventLoop.shutdown()")
        let done = DispatchSemaphore(value: 0)
        whenStopped { done.signal() }
        beginShutdown()
        done.wait()
    }

    /// Shuts the loop down as `shutdown()` does, and returns once its thread has ended, without
    /// blocking a thread meanwhile. In an async context `shutdown()` names this overload (Swift
    /// prefers it there); the blocking one is for synchronous code.
    public func shutdown() async {
        guard !inLoop else {
            beginShutdown()
            return
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            whenStopped { continuation.resume() }
            beginShutdown()
        }
    }

    /// Calls `body` once the thread has stopped (at once if it has; else on the loop's thread,
    /// after its last job and the loop's close).
    func whenStopped(_ body: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            if state.run == .stopped { return true }
            state.stopWaiters.append(body)
            return false
        }
        if now { body() }
    }

    /// Refuses jobs from now on, and queues the last one: the one that closes everything.
    /// Returns at once (`EventLoopGroup` starts all its loops' shutdowns before waiting).
    func beginShutdown() {
        state.withLock { state in
            guard state.run == .running || state.run == .starting else { return }
            state.run = .stopping
            if jobs.push({ [self] in self.closeEverything() }) { uv_async_send(wakeup) }
        }
    }

    /// The last job: observers end their tasks and close their connections, the completions
    /// that produces leave, then every handle left is closed and uv_run returns.
    private func closeEverything() {
        let observers = shutdownObservers
        shutdownObservers.removeAll()
        for observer in observers.values { observer() }
        // Finished tasks are handed off after I/O; that phase will not come again.
        while !afterIOCallbacks.isEmpty { runAfterIO() }
        uv_walk(uv, { handle, _ in
            guard let handle, uv_is_closing(handle) == 0 else { return }
            uv_close(handle, nil)
        }, nil)
    }

    deinit {
        // Only reached for loops that were shut down or never started (the shared loop lives
        // forever).
        wakeup.deallocate()
        checkHandle.deallocate()
        idleHandle.deallocate()
        readBuffer.deallocate()
        writeScratch.deallocate()
        uv.deallocate()
    }
}
