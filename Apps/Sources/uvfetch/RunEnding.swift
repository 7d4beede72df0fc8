import Foundation
import Glibc
import Synchronization
import UVFetchCore

/// How a `fetch` run that stops early ends the process: once (a signal, a write error and the
/// fallback timer may race), with the reason and the summary so far on standard error, which
/// never waits long for a reader, then the run's exit status.
final class RunEnding: Sendable {
    private let taken = Atomic<Bool>(false)

    /// Seconds a stop waits for the completion queue before exiting without it: the queue's
    /// own settling (2 s for the requests in flight) plus a margin.
    static let fallbackSeconds = 3.0

    /// Ignores SIGPIPE so that a write to a closed pipe returns EPIPE and the run can stop
    /// cleanly (requests cancelled, partial downloads removed) before it ends (`ClosedPipe`).
    init() {
        ClosedPipe.prepare()
    }

    /// After a signal: "uvfetch: interrupted" or "terminated", the summary, `status`.
    func afterSignal(_ word: String, status: Int32, _ outcome: FetchRunner.Outcome, forced: Bool = false) -> Never {
        end(lines: ["uvfetch: \(word)", summary(outcome)], status: status, forced: forced)
    }

    /// After a failed write: the failure and the summary, exit 23; or, for a closed pipe when
    /// SIGPIPE was not ignored, nothing, and death by SIGPIPE.
    func afterWriteFailure(_ failure: WriteFailure, _ outcome: FetchRunner.Outcome) -> Never {
        if ClosedPipe.endsBySignal(failure) {
            guard !taken.exchange(true, ordering: .acquiringAndReleasing) else { waitForExit() }
            ClosedPipe.raiseSignal()
        }
        end(lines: ["uvfetch: \(failure)", summary(outcome)], status: ExitStatus.writeError, forced: false)
    }

    private func summary(_ outcome: FetchRunner.Outcome) -> String {
        outcome.statistics.summary(seconds: outcome.seconds)
    }

    /// `forced` is for a thread that exits while the completion queue may be inside a write:
    /// `_exit` skips the exit handlers, which would flush or tear down under it.
    private func end(lines: [String], status: Int32, forced: Bool) -> Never {
        guard !taken.exchange(true, ordering: .acquiringAndReleasing) else { waitForExit() }
        LineOutput.standardError.writeWithin(seconds: 1, lines.joined(separator: "\n") + "\n")
        if forced { _exit(status) }
        exit(status)
    }

    /// Another thread is ending the process.
    private func waitForExit() -> Never {
        while true { pause() }
    }
}
