import ArgumentParser
import Glibc
import UVFetchCore

/// How every uvfetch command ends when the reader of what it writes goes away
/// (`uvfetch ... | head -1`): as `cat` or `grep` would, killed by SIGPIPE, silent, but only
/// after a clean stop (requests cancelled, a worker's leases handed back, the database
/// connection closed), which the signal itself would not allow. So SIGPIPE is ignored while
/// the command runs, a closed pipe is seen as EPIPE, and `end(after:)` raises the signal once
/// the command has stopped.
///
/// If SIGPIPE was already ignored when uvfetch started, the caller asked for EPIPE instead of
/// the signal, and a closed pipe is a write error like any other: the message, exit 23.
enum ClosedPipe {
    /// Whether SIGPIPE was ignored when the command started. Read once, by `prepare()`, before
    /// anything else changes it: PostgresNIO's sockets (SwiftNIO) ignore SIGPIPE for the whole
    /// process as the first one opens, which would make every closed pipe look asked for.
    static let signalWasIgnored: Bool = {
        let previous = signal(SIGPIPE, SIG_IGN)
        // C function pointers are not Equatable in Swift: compare their addresses.
        return unsafeBitCast(previous, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self)
    }()

    /// Reads SIGPIPE's inherited disposition and ignores SIGPIPE from now on. First thing in
    /// every command that writes to standard output; calling it again changes nothing.
    static func prepare() {
        _ = signalWasIgnored
    }

    /// Whether `failure` ends the process by SIGPIPE (`end(after:)`) rather than by exit 23.
    static func endsBySignal(_ failure: WriteFailure) -> Bool {
        failure.isBrokenPipe && !signalWasIgnored
    }

    /// Dies by SIGPIPE, with the status a shell shows for it (141).
    static func raiseSignal() -> Never {
        signal(SIGPIPE, SIG_DFL)
        kill(getpid(), SIGPIPE)
        // Every thread blocking it (none should): the status a shell shows for the signal.
        usleep(200_000)
        _exit(128 + SIGPIPE)
    }

    /// After a command's output failed, once it has stopped: dies by SIGPIPE for a closed pipe
    /// (see the type's comment); otherwise writes "uvfetch: write error on ...: ..." to standard
    /// error and returns exit 23, for the command to throw.
    static func end(after failure: WriteFailure) -> ExitCode {
        if endsBySignal(failure) { raiseSignal() }
        LineOutput.standardError.writeWithin(seconds: 5, "uvfetch: \(failure)\n")
        return ExitCode(ExitStatus.writeError)
    }

    /// Writes a command's `text` to standard output; a failed write ends the command as
    /// `end(after:)` says, after `cleanUp` (closing the database, say) has run.
    static func writeOutput(_ text: String, cleanUp: () -> Void = {}) throws(ExitCode) {
        do throws(WriteFailure) {
            try LineOutput.standardOutput.write(text)
        } catch {
            cleanUp()
            throw end(after: error)
        }
    }
}
