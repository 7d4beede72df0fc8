import Foundation
import HTTPTypes
import UVHTTP1

/// What a task keeps once its session's retrier has asked for another attempt
/// (`TaskRunner.retries`): how many were made, the delay asked for a response whose body is
/// still being dropped, and the timer of the wait. Loop-confined, owned by the runner.
final class RetryWait {
    /// Attempts made after the first.
    var count = 0
    /// The delay the retrier asked for the response being dropped; nil when none is: a
    /// `planRestart` is then a download's restart.
    var pendingDelay: TimeInterval?
    /// Made at the first wait and kept (re-armed) for the task's life: closed when the task
    /// ends, never released from inside its own callback.
    private var timer: LoopTimer?

    var isPending: Bool { pendingDelay != nil }

    /// Calls `due` on the loop thread at `deadline` (loop milliseconds).
    func arm(at deadline: UInt64, loop: EventLoop, due: @escaping () -> Void) {
        if timer == nil { timer = LoopTimer(loop: loop, onFire: due) }
        timer!.arm(at: deadline)
    }

    /// The task ended: the timer never fires again.
    func close() {
        timer?.close()
    }
}

/// The runner's side of `SessionConfiguration.retrier`: when an attempt ends badly the retrier
/// is asked, on the loop, whether the request goes again and after how long.
///
/// Two moments ask it. A response head with an error status (400 or more): if the retrier
/// retries, the response is dropped like a redirect's (its body drained or the connection
/// closed) and reaches neither the task's sink nor its hooks. And a failure (transport,
/// timeout, decoding...): the failed exchange is already given up; if the retrier retries, the
/// task waits instead of ending. Never asked after a cancellation or the session's end, once
/// the response's body has gone to an async stream or a download's file (the caller has it),
/// or when the wait would pass the request's total deadline: the outcome in hand stands.
/// The attempt after the wait is a new exchange of the request being sent (after redirects,
/// the one they led to), through the pool as any request.
extension TaskRunner {
    /// An error status arrived; true when the retrier asked for another attempt, and the
    /// response is being dropped.
    func retryAfterStatus(_ head: ResponseHead, bodyLength: Int64?, _ retrier: any RequestRetrier) -> Bool {
        guard let delay = retryDelay(from: retrier, response: head.httpResponse, error: nil) else { return false }
        let wait = retries ?? RetryWait()
        retries = wait
        wait.pendingDelay = delay
        observeRetryScheduled(after: "status \(head.status)", delay: delay)
        // Its end (now, for a body not worth reading) brings `planRestart`, then `waitForRetry`.
        restartHeadReceived(bodyLength: bodyLength)
        return true
    }

    /// The body of a response dropped for its status is done with: the wait begins.
    func waitForRetry() {
        guard let wait = retries, let delay = wait.pendingDelay else { return }
        wait.pendingDelay = nil
        guard machine.retryLater() else { return }
        resetForNextAttempt(bodyDelivered: false)
        startWait(wait, delay: delay)
    }

    /// `retryAfterFailure` with the session's retrier, out of line: `finish` calls it only for
    /// a failure of a session that has one, and stays small for every success.
    @inline(never)
    func retriedAfterFailure(_ error: NetworkingError?) -> Bool {
        guard let error, let retrier = engine.retrier else { return false }
        return retryAfterFailure(error, retrier)
    }

    /// The task failed with `error` (the machine is `failed`, the exchange given up); true when
    /// the retrier asked for another attempt, and the task waits for it instead of ending.
    private func retryAfterFailure(_ error: NetworkingError, _ retrier: any RequestRetrier) -> Bool {
        guard machine.state == .failed, Self.mayRetry(after: error.code) else { return false }
        // Bytes an async stream's reader or a download's file already took cannot be taken back.
        let bodyDelivered = head != nil && machine.destination == .task
        guard !bodyDelivered || sink.restartsAfterHead else { return false }
        guard let delay = retryDelay(from: retrier, response: error.response, error: error), machine.retryLater() else { return false }
        let wait = retries ?? RetryWait()
        retries = wait
        // A failure while a dropped response drained replaces that response's wait: a later
        // `planRestart` (a download's) must not find it.
        wait.pendingDelay = nil
        observeRetryScheduled(after: "\(error.code)", delay: delay)
        resetForNextAttempt(bodyDelivered: bodyDelivered)
        startWait(wait, delay: delay)
        return true
    }

    /// Failures that are the caller's or the session's doing, never the server's.
    private static func mayRetry(after code: NetworkingError.Code) -> Bool {
        code != .cancelled && code != .sessionInvalidated && code != .loopShutDown
    }

    /// The retrier's delay for the attempt that just ended, or nil when it does not retry or
    /// when the wait would end past the request's total deadline.
    private func retryDelay(from retrier: any RequestRetrier, response: HTTPResponse?, error: NetworkingError?) -> TimeInterval? {
        guard cacheAllowsRetry else { return nil }
        let attempt = (retries?.count ?? 0) + 1
        let decision = retrier.retryDecision(for: currentRequest, attempt: attempt, response: response, error: error, now: Date())
        guard case .retry(let seconds, _) = decision else { return nil }
        let delay = seconds.isNaN ? 0 : max(0, seconds)
        guard LoopDuration.deadline(LoopTimer.now(loop), plus: LoopDuration.clamped(delay)) < requestDeadline else { return nil }
        return delay
    }

    private func startWait(_ wait: RetryWait, delay: TimeInterval) {
        wait.count += 1
        task.recordRetry()
        task.trace?.resent(reason: "retry")
        wait.arm(at: LoopDuration.deadline(LoopTimer.now(loop), plus: LoopDuration.clamped(delay)), loop: loop) { [unowned self] in
            self.retryDue()
        }
    }

    /// The wait is over (a cancel meanwhile left the machine where `retryDue` does nothing).
    private func retryDue() {
        let action = machine.retryDue()
        guard case .enqueue = action else { return }
        lastByteAt = LoopTimer.now(loop)
        perform(action)
    }
}
