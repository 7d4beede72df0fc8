/// Whether the tasks finished in one loop iteration wait for the next iteration's before they go
/// to the completion queue (`SessionEngine.flushFinished`).
///
/// Posting to an idle serial queue wakes the thread that runs it: a futex call on each side and a
/// context switch. The queue drains a batch faster than the loop fills one, so it is idle at
/// almost every post, and each post then costs a wake-up. Putting the batch off by one iteration
/// (whose poll does not block: `EventLoop.runAfterIO`) lets the next iteration's finished tasks
/// join it, for one wake-up instead of two. Only once in a row, only when a post would wake the
/// queue, only while other tasks run (so more may finish), and never while the session or the
/// loop is ending (what runs after the flush then counts on its tasks being in the group).
struct FlushDeferral {
    /// The pending flush was put off already: it goes now.
    private(set) var deferred = false

    /// Called at each flush: true when this one should wait for the next iteration.
    mutating func shouldDefer(queueIdle: Bool, othersRunning: Bool, ending: Bool) -> Bool {
        if deferred {
            deferred = false
            return false
        }
        guard queueIdle, othersRunning, !ending else { return false }
        deferred = true
        return true
    }
}
