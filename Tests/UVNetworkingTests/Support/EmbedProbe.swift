import Foundation
import Glibc

/// The `uvnetworking-embed-probe` executable (Tests/EmbedProbe), built next to the test bundle.
/// Each of its scenarios is a way of embedding the library that once ended the process; a test
/// runs one in a child process, so a crash fails that test instead of the whole run.
enum EmbedProbe {
    /// How a probe run ended.
    struct Result: CustomStringConvertible {
        /// The exit status, when the probe exited.
        var status: Int32?
        /// The signal that ended it (SIGSEGV, SIGILL from a trap, SIGKILL after the timeout).
        var signal: Int32?
        var timedOut: Bool
        var stdout: String
        var stderr: String

        /// Exited by itself with status 0.
        var succeeded: Bool { status == 0 && !timedOut }

        var description: String {
            let end = timedOut ? "timed out" : signal.map { "killed by signal \($0)" } ?? "exit \(status ?? -1)"
            return "\(end); stdout: \(stdout.trimmingCharacters(in: .whitespacesAndNewlines)); stderr: \(stderr.suffix(2000))"
        }
    }

    /// The executable, `<bin>/uvnetworking-embed-probe`.
    static var executable: URL { builtExecutable("uvnetworking-embed-probe") }

    /// Runs `scenario` and waits at most `timeout` seconds (then kills it).
    static func run(_ scenario: String, timeout: Double = 60) throws -> Result {
        let process = Process()
        process.executableURL = executable
        process.arguments = [scenario]
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        try process.run()
        let out = ProcessOutput(reading: output.fileHandleForReading)
        let err = ProcessOutput(reading: errors.fileHandleForReading)
        let timedOut = exited.wait(timeout: .now() + timeout) == .timedOut
        if timedOut {
            kill(process.processIdentifier, SIGKILL)
            exited.wait()
        }
        let bySignal = process.terminationReason == .uncaughtSignal
        return Result(status: bySignal ? nil : process.terminationStatus,
                      signal: bySignal ? process.terminationStatus : nil,
                      timedOut: timedOut,
                      stdout: String(decoding: out.wait(), as: UTF8.self),
                      stderr: String(decoding: err.wait(), as: UTF8.self))
    }
}

/// An executable target of the package under test, `<bin>/name`: the test binary
/// (`<bin>/<Package>PackageTests.xctest`) is built in the same directory as every product.
func builtExecutable(_ name: String) -> URL {
    let this = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    return URL(fileURLWithPath: this).deletingLastPathComponent().appendingPathComponent(name)
}
