import Dispatch
import Foundation
import HTTPTypes

/// Where and how completions are delivered, read from the manager when a batch leaves the loop.
struct DeliveryTarget: @unchecked Sendable {
    // @unchecked: DispatchQueue and DispatchGroup are thread-safe; the serializer is Sendable.
    var queue: DeliveryQueue
    var group: DispatchGroup
    var serializer: any ResponseSerializer
    /// `serializer` when it is an `HTTPResponseSerializer`: then a task's response is validated
    /// with its head's integer status, not the one swift-http-types parses from text.
    var plainValidation: HTTPResponseSerializer?
    /// The manager's hooks when any is set, read once per batch.
    let hooks: SessionHooks.Storage?
    /// `hooks != nil`, kept as a flag: the optional's test is an outlined call per task (its
    /// closures' layout), a stored Bool's one load.
    let hasHooks: Bool

    init(queue: DeliveryQueue, group: DispatchGroup, serializer: any ResponseSerializer,
         plainValidation: HTTPResponseSerializer? = nil, hooks: SessionHooks.Storage? = nil) {
        self.queue = queue
        self.group = group
        self.serializer = serializer
        self.plainValidation = plainValidation
        self.hooks = hooks
        self.hasHooks = hooks != nil
    }

    /// Handlers on a dispatch queue.
    init(queue: DispatchQueue, group: DispatchGroup, serializer: any ResponseSerializer, hooks: SessionHooks.Storage? = nil) {
        self.init(queue: .dispatch(queue), group: group, serializer: serializer, hooks: hooks)
    }
}

/// Builds each finished task's response and stores its cookies, serializes it, then calls the
/// completion handlers on the completion queue inside the completion group, as AFNetworking does
/// with dispatch_group_async. A batch (the tasks that finished in one loop iteration) costs one
/// dispatch.
///
/// It runs where the batch needs it (`needsWorker`): on a worker thread when some task needs real
/// work (a serializer that parses, cookies to parse, a download's file), then the handlers are
/// queued (`.queued`); otherwise the loop hands the whole batch to the completion queue, or runs
/// it itself with `deliversOnEventLoop`, and the handlers are called right there (`.here`).
enum CompletionDelivery {
    /// Where `run` calls the completion handlers.
    enum Handlers {
        /// Queued on the target's queue, in its group, once per batch (run on a worker).
        case queued
        /// At once: `run` already runs where handlers run, inside the group.
        case here
    }

    struct Outcome: @unchecked Sendable {
        // @unchecked: the object was made on this worker and is handed over, never shared.
        var task: SessionTask
        var response: HTTPResponse?
        var object: Any?
        var error: (any Error)?
        /// The body handed to the serializer (hooked deliveries only).
        var data: Data? = nil
        /// A download's file once moved to its destination (the did-complete notification's
        /// asset path).
        var assetPath: URL? = nil
        /// Runs on the completion queue just before the completion handler (a download's
        /// resume data handed over).
        var beforeHandler: (@Sendable () -> Void)? = nil
        /// Runs just after the completion handler (a download's temporary file removed).
        var afterHandler: (@Sendable () -> Void)? = nil
    }

    /// Whether some task of `batch` needs a worker thread before its handlers run: its serializer
    /// does real work, its response sets cookies to parse into a cookie store, it is a download
    /// (the destination closure and the move) or an async caller's (its continuation is resumed
    /// from the worker, whatever the completion queue). Loop thread.
    static func needsWorker(_ batch: [SessionEngine.FinishedTask], serializer: any ResponseSerializer) -> Bool {
        var serializerAsked = false
        // By index: iterating the array would copy each finished task whole.
        for index in batch.indices {
            let task = batch[index].task
            if task.isDownload || task.outcomeReceiver != nil { return true }
            if (batch[index].isPlain || batch[index].error == nil) && !serializerAsked {
                if serializer.needsWorkerThread { return true }
                serializerAsked = true
            }
            if task.manager.cookieStore != nil && batch[index].mayStoreCookies { return true }
        }
        return false
    }

    static func run(_ batch: [SessionEngine.FinishedTask], with target: DeliveryTarget, handlers: Handlers = .queued) {
        var batch = batch
        run(&batch, with: target, handlers: handlers)
    }

    /// `run`, on tasks read and resolved in place: a uniquely held batch is not copied task by
    /// task (each copy retains and releases every reference a finished task holds). Each entry
    /// is released right after its task was delivered: the task, often freed there, leaves its
    /// memory in the thread's malloc cache for the next task (which that handler or the next one
    /// makes); freed together after the batch, most would overflow the cache into the arena's
    /// slower bins. The emptied entries are left in `batch`.
    static func run(_ batch: inout [SessionEngine.FinishedTask], with target: DeliveryTarget, handlers: Handlers = .queued) {
        var outcomes: [Outcome] = []
        if handlers == .queued { outcomes.reserveCapacity(batch.count) }
        var hooked: [SessionEngine.FinishedTask] = []
        for index in batch.indices {
            runOne(&batch[index], with: target, handlers: handlers, &outcomes, &hooked)
            batch[index].release()
        }
        if !hooked.isEmpty { runHooked(hooked, with: target, handlers: handlers) }
        guard !outcomes.isEmpty else { return }
        let ready = outcomes
        target.queue.async(group: target.group) {
            for outcome in ready {
                outcome.task.completionHandler?(outcome.response, outcome.object, outcome.error)
            }
        }
    }

    /// One task of `run`: resolved, then delivered, or set aside for a worker (a download) or
    /// the hooked delivery.
    @inline(__always)
    private static func runOne(_ finished: inout SessionEngine.FinishedTask, with target: DeliveryTarget, handlers: Handlers,
                               _ outcomes: inout [Outcome], _ hooked: inout [SessionEngine.FinishedTask]) {
        // Once per task, before anything reads the response: builds it and stores its cookies.
        let response = finished.resolveResponse()
        // Read once: each read of the entry's task (it is inout) would retain and release it.
        let task = finished.task
        if task.isDownload {
            // Its own job: the destination closure and the move (a copy, across file systems)
            // must not hold up the rest of the batch.
            let download = finished
            target.group.enter()
            task.manager.workers.run {
                DownloadDelivery.run(download, with: target)
                target.group.leave()
            }
            return
        }
        if let receiver = task.outcomeReceiver {
            // An async caller: serialized here, its continuation resumed from this worker
            // (`needsWorker` keeps such tasks off the completion queue and the loop).
            finished.response = response
            receiver.receive(finished, serializer: target.serializer)
            // Its manager hooks and notification still run, on the completion queue; the
            // caller may resume before they do (there is no completion block to order after).
            // (Its hook state exists for metrics alone unless hooks are on.)
            if target.hasHooks || finished.hooks?.channel != nil { hooked.append(finished) }
            return
        }
        if target.hasHooks || finished.hooks != nil {
            finished.response = response
            hooked.append(finished)
            return
        }
        // A plain delivery: the response, the object and the error go straight to the handler
        // (or to the batch's one dispatch), never copied into an outcome on the way.
        guard task.completionHandler != nil else { return }
        if !finished.isPlain, let error = finished.error {
            // A transport failure skips the serializer: (response, nil, error).
            deliver(task, error.response, nil, error, handlers, &outcomes)
            return
        }
        guard let response else { return }
        do {
            // Checked, then unwrapped in place: binding the serializer would copy it (a retain and
            // a release of each of its references) per task.
            if target.plainValidation != nil, let head = finished.head {
                deliver(task, response,
                        try target.plainValidation!.responseObject(for: response, data: finished.body, statusCode: head.status),
                        nil, handlers, &outcomes)
            } else {
                deliver(task, response, try target.serializer.responseObject(for: response, data: finished.body),
                        nil, handlers, &outcomes)
            }
        } catch var error as NetworkingError {
            error.failingURL = error.failingURL ?? task.originalRequest.url
            // AFNetworking delivers an object with the error when only the status was rejected.
            deliver(task, response, error.responseObject, error, handlers, &outcomes)
        } catch {
            deliver(task, response, nil, error, handlers, &outcomes)
        }
    }

    /// Calls the task's handler at once, or keeps the outcome for the batch's one dispatch.
    @inline(__always)
    private static func deliver(_ task: SessionTask, _ response: HTTPResponse?, _ object: consuming Any?, _ error: (any Error)?,
                                _ handlers: Handlers, _ outcomes: inout [Outcome]) {
        switch handlers {
        case .here: task.completionHandler?(response, object, error)
        case .queued: outcomes.append(Outcome(task: task, response: response, object: object, error: error))
        }
    }

    /// A batch for the completion queue, inside its target's group from the moment it is
    /// posted (`SessionEngine.flushFinished`) until its handlers have run.
    struct Batch: @unchecked Sendable {
        // @unchecked: handed from the loop to the queue whole, never shared.
        var tasks: [SessionEngine.FinishedTask]
        var target: DeliveryTarget

        /// On the completion queue: builds the responses, calls the handlers, leaves the group.
        mutating func deliver() {
            // Taken out, not copied: the batch would keep a second reference to the array, and
            // resolving its tasks in place would then copy it whole (every task retained).
            var tasks: [SessionEngine.FinishedTask] = []
            swap(&tasks, &self.tasks)
            CompletionDelivery.run(&tasks, with: target, handlers: .here)
            target.group.leave()
        }
    }

    /// Calls one outcome's completion handler with what comes before and after it, on the
    /// completion queue.
    static func deliverAlone(_ outcome: Outcome, with target: DeliveryTarget) {
        target.queue.async(group: target.group) {
            outcome.beforeHandler?()
            outcome.task.completionHandler?(outcome.response, outcome.object, outcome.error)
            outcome.afterHandler?()
        }
    }
}
