import Synchronization

/// The one way into the loop thread: a multi-producer, single-consumer queue of closures.
///
/// Producers append under a mutex; the loop thread swaps the whole array out and runs it, so a
/// wake-up drains everything that was queued before it, and a wake-up that finds the queue empty
/// (uv_async_send coalesces, so that happens) costs one lock.
final class JobQueue: Sendable {
    typealias Job = @Sendable () -> Void

    /// A job as the queue stores it. A closure stored in an array directly is re-abstracted
    /// for the array's generic element, which allocates a thunk per job; inside a struct it is
    /// stored as it is.
    struct Entry {
        let run: Job
    }

    private let jobs = Mutex<[Entry]>([])

    /// Appends a job; returns true when the queue was empty, i.e. the consumer needs a wake-up.
    @discardableResult
    func push(_ job: @escaping Job) -> Bool {
        jobs.withLock { jobs in
            jobs.append(Entry(run: job))
            return jobs.count == 1
        }
    }

    /// Takes every queued job, in the order they were pushed, by swapping them with `taken`
    /// (empty): the queue keeps `taken`'s storage, so a
    /// consumer that hands back the same emptied array every time saves the queue an allocation
    /// per wake-up.
    func drain(into taken: inout [Entry]) {
        jobs.withLock { jobs in
            if jobs.isEmpty { return }
            swap(&taken, &jobs)
        }
    }
}
