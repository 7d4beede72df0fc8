import Foundation
import Glibc
import Synchronization

/// An executable of this package (built next to the test bundle) run as a child process that
/// the test talks to while it runs: wait for a line of its output, send it a signal, wait for
/// it to exit. A crash or a hang there fails the test, not the test run.
final class ChildProcess: Sendable {
    private let process: Process
    private let output: ProcessOutput
    private let exited = DispatchSemaphore(value: 0)

    /// Starts `<bin>/name` with `arguments`; its standard output and error are read together.
    init(_ name: String, arguments: [String]) throws {
        let process = Process()
        process.executableURL = builtExecutable(name)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        self.process = process
        process.terminationHandler = { [exited] _ in exited.signal() }
        try process.run()
        output = ProcessOutput(reading: pipe.fileHandleForReading)
    }

    /// Everything it wrote so far.
    var text: String { output.text }

    /// Waits until its output contains `needle`; false after `timeout` seconds or once it exited
    /// without writing it.
    func waitForOutput(_ needle: String, timeout: Double) -> Bool {
        waitUntil(timeout: timeout) { text.contains(needle) || !process.isRunning } && text.contains(needle)
    }

    func send(_ signal: Int32) { kill(process.processIdentifier, signal) }

    /// Waits for it to exit: its status, or nil when it was killed by a signal or did not exit
    /// within `timeout` seconds (then it is killed).
    func waitForExit(timeout: Double) -> Int32? {
        if exited.wait(timeout: .now() + timeout) == .timedOut {
            kill(process.processIdentifier, SIGKILL)
            exited.wait()
            return nil
        }
        // The last of its output may still be in the pipe.
        output.waitForEnd()
        return process.terminationReason == .exit ? process.terminationStatus : nil
    }
}
