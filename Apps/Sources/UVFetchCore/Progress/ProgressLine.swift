#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation

/// The live progress line on a terminal: redrawn in place with `\r` a few times a second, cleared
/// before any other line is printed and at the end, so it never mixes into the output.
///
/// Everything runs on one serial queue (the runner's completion queue): the timer, the per-URL
/// lines and the final clear take turns there, so two writers never interleave on stdout.
final class ProgressLine: @unchecked Sendable {
    // @unchecked: `isDrawn` and `timer` are touched only on `queue`.
    private let queue: DispatchQueue
    private let snapshot: @Sendable () -> ProgressSnapshot
    private var timer: DispatchSourceTimer?
    private var isDrawn = false

    /// Redraws this often: fast enough to look live, slow enough to cost nothing measurable.
    static let interval = DispatchTimeInterval.milliseconds(200)

    /// A line showing what `snapshot` returns, drawn on `queue`.
    init(queue: DispatchQueue, snapshot: @escaping @Sendable () -> ProgressSnapshot) {
        self.queue = queue
        self.snapshot = snapshot
    }

    /// Whether standard output is a terminal: the line is for people, never for pipes or files.
    static var standardOutputIsTerminal: Bool { isatty(STDOUT_FILENO) == 1 }

    /// Starts drawing.
    func start() {
        queue.async { [self] in
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.schedule(deadline: .now(), repeating: Self.interval)
            timer.setEventHandler { [weak self] in self?.draw() }
            self.timer = timer
            timer.resume()
        }
    }

    /// Clears the line so the caller can print a line of its own; the next tick draws it again.
    /// Call on `queue`.
    func clear() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard isDrawn else { return }
        write("\r\u{1B}[2K")
        isDrawn = false
    }

    /// Stops drawing and leaves the line cleared. Returns once done.
    func stop() {
        queue.sync {
            timer?.cancel()
            timer = nil
            clear()
            fflush(nil)
        }
    }

    private func draw() {
        // `\r` then erase-line: the new text may be shorter than the old.
        write("\r\u{1B}[2K" + snapshot().line(width: Self.terminalWidth() - 1))
        fflush(nil)
        isDrawn = true
    }

    /// With write(2), as the per-URL lines are written, so everything reaches the terminal in
    /// the order it was written. A failed write is left to the next per-URL line to report.
    private func write(_ text: String) {
        try? LineOutput.standardOutput.write(text)
    }

    /// Columns of the terminal; 80 when it will not say.
    private static func terminalWidth() -> Int {
        var size = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return 80 }
        return Int(size.ws_col)
    }
}
