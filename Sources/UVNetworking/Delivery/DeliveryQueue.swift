import Dispatch

/// Where a session's handlers run: the completion queue (AFNetworking's), or the session's own
/// loop thread (`SessionManager.deliversOnEventLoop`).
enum DeliveryQueue: @unchecked Sendable {
    // @unchecked: DispatchQueue is thread-safe; EventLoop is Sendable.
    case dispatch(DispatchQueue)
    case loop(EventLoop)

    /// Runs `work` there, inside `group`, never before this call returns.
    ///
    /// On the loop, work submitted from the loop thread waits for the end of the iteration
    /// (`runAfterIO`): handlers are called only where the loop holds no state half-changed, so
    /// that a handler may resume or cancel tasks inline. Once the loop has shut down, the work
    /// runs on a Dispatch global queue instead: a task still completes exactly once.
    func async(group: DispatchGroup, execute work: @escaping @Sendable () -> Void) {
        switch self {
        case .dispatch(let queue):
            queue.async(group: group, execute: work)
        case .loop(let loop):
            group.enter()
            let inGroup: @Sendable () -> Void = {
                work()
                group.leave()
            }
            if loop.inLoop {
                loop.runAfterIO(inGroup)
            } else if !loop.execute(inGroup) {
                DispatchQueue.global().async(execute: inGroup)
            }
        }
    }

    /// `async(group:execute:)` outside any group (progress handlers).
    func async(execute work: @escaping @Sendable () -> Void) {
        switch self {
        case .dispatch(let queue):
            queue.async(execute: work)
        case .loop(let loop):
            if loop.inLoop {
                loop.runAfterIO(work)
            } else if !loop.execute(work) {
                DispatchQueue.global().async(execute: work)
            }
        }
    }

    /// Whether handlers run on the loop thread.
    var isLoop: Bool {
        if case .loop = self { return true }
        return false
    }
}
