import Foundation
import Glibc
import Synchronization
import UVFetchCore

/// How a `fetch` run that stops early ends the process: once (a signal, a write error and the
/// fallback timer may race), with the reason and the summary so far on standard error, which
/// never waits long for a reader, then the run's exit status.
final class RunEnding: Sendable {
    private let taken = Atomic<Bool>(false)
    /// Whether SIGPIPE was ignored when uvfetch started. If it was, the caller asked for EPIPE
    /// instead of the signal, and a closed pipe is a write error like any other (exit 23);
    /// otherwise uvfetch ends as `cat` would, killed by SIGPIPE after a clean stop, silent.
    let pipeSignalWasIgnored: Bool

    /// Seconds a stop waits for the completion queue before exiting without it: the queue's
    /// own settling (2 s for the requests in flight) plus a margin.
    static let fallbackSeconds = 3.0

    /// Reads SIGPIPE's inherited disposition, then ignores SIGPIPE so that a write to a closed
    /// pipe returns EPIPE and the run can stop cleanly (requests cancelled, partial downloads
    /// removed) before it ends.
    init() {
        let previous = signal(SIGPIPE, SIG_IGN)
        // C function pointers are not Equatable in Swift: compare their addresses.
        pipeSignalWasIgnored = unsafeBitCast(previous, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self)
    }

    /// After a signal: "uvfetch: interrupted" or "terminated", the summary, `status`.
    func afterSignal(_ word: String, status: Int32, _ outcome: FetchRunner.Outcome, forced: Bool = false) -> Never {
        end(lines: ["uvfetch: \(word)", summary(outcome)], status: status, forced: forced)
    }

    /// After a failed write: the failure and the summary, exit 23; or, for a closed pipe when
    /// SIGPIPE was not ignored, nothing, and death by SIGPIPE.
    func afterWriteFailure(_ failure: WriteFailure, _ outcome: FetchRunner.Outcome) -> Never {
        if failure.isBrokenPipe && !pipeSignalWasIgnored {
            guard !taken.exchange(true, ordering: .acquiringAndReleasing) else { waitForExit() }
            signal(SIGPIPE, SIG_DFL)
            kill(getpid(), SIGPIPE)
            // Every thread blocking it (none should): the status a shell shows for the signal.
            usleep(200_000)
            _exit(128 + SIGPIPE)
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
