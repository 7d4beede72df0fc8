import Foundation
import Glibc
import Synchronization

/// A process started inside one side of a `RouterNamespace` (`ip netns exec`, which execs it in
/// place, so the pid is the process's own) whose standard input is a socket the test holds: the
/// test sends it lines, and closing the socket, or the test process dying, ends its input. A
/// socket rather than a pipe: a line sent after the process died is EPIPE (MSG_NOSIGNAL), not a
/// SIGPIPE that would end the test run. Its standard output and error are read together.
final class NamespaceProcess: Sendable {
    private let process: Process
    /// The test's end of the standard-input socket; -1 once closed.
    private let input: Mutex<Int32>
    private let output: ProcessOutput
    private let exited = DispatchSemaphore(value: 0)
    private let state = State()

    private final class State: Sendable {
        /// The process was reaped (set before `exited` is signalled).
        let reaped = Atomic(false)
    }

    init(_ namespace: RouterNamespace, _ side: RouterNamespace.Side, _ command: [String]) throws {
        let process = Process()
        let arguments = namespace.execArguments(side, command)
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        // Close-on-exec, so no child that another test spawns meanwhile keeps the input open.
        var ends: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
            throw RouterNamespaceError("socketpair failed: \(String(cString: strerror(errno)))")
        }
        let stdout = Pipe()
        process.standardInput = FileHandle(fileDescriptor: ends[1], closeOnDealloc: false)
        process.standardOutput = stdout
        process.standardError = stdout
        self.process = process
        input = Mutex(ends[0])
        process.terminationHandler = { [exited, state] _ in
            state.reaped.store(true, ordering: .releasing)
            exited.signal()
        }
        defer { close(ends[1]) }
        do { try process.run() } catch {
            close(ends[0])
            throw error
        }
        output = ProcessOutput(reading: stdout.fileHandleForReading)
    }

    /// Whether this process may make namespaces (root with CAP_SYS_ADMIN, as in CI).
    static let canUnshare: Bool = {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare") else { return false }
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        probe.arguments = ["--mount", "--net", "--propagation", "private", "true"]
        probe.standardOutput = FileHandle.nullDevice
        probe.standardError = FileHandle.nullDevice
        guard (try? probe.run()) != nil else { return false }
        probe.waitUntilExit()
        return probe.terminationStatus == 0
    }()

    /// Starts the embed probe's `scenario` with `arguments` inside `side`.
    static func probe(_ namespace: RouterNamespace, _ side: RouterNamespace.Side, _ scenario: String, _ arguments: [String]) throws -> NamespaceProcess {
        try NamespaceProcess(namespace, side, [EmbedProbe.executable.path, scenario] + arguments)
    }

    deinit {
        closeInput()
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    private func closeInput() {
        input.withLock { fd in
            if fd >= 0 { close(fd) }
            fd = -1
        }
    }

    /// Everything it wrote so far.
    var text: String { output.text }

    /// Its complete lines so far.
    var lines: [String] {
        let text = self.text
        let complete = text.hasSuffix("\n") ? text : String(text[..<(text.lastIndex(of: "\n") ?? text.startIndex)])
        return complete.split(separator: "\n").map(String.init)
    }

    var isRunning: Bool { process.isRunning }

    /// Sends one line to its standard input.
    func send(_ line: String) {
        input.withLock { fd in
            guard fd >= 0 else { return }
            let bytes = Array((line + "\n").utf8)
            _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }
    }

    /// Waits until a line satisfies `condition`; the line, or nil after `timeout` seconds or once
    /// it exited without writing one.
    func waitForLine(timeout: Double, _ condition: (String) -> Bool) -> String? {
        var found: String?
        _ = waitUntil(timeout: timeout) {
            found = lines.first(where: condition)
            return found != nil || !process.isRunning
        }
        return found ?? lines.first(where: condition)
    }

    /// Closes its standard input and waits for it to exit: its status, or nil when a signal ended
    /// it or it did not exit within `timeout` seconds (then it is killed). Idempotent.
    func finish(timeout: Double = 10) -> Int32? {
        closeInput()
        // Called again (a test's finish, then deinit's): the semaphore was taken already.
        if !state.reaped.load(ordering: .acquiring) && exited.wait(timeout: .now() + timeout) == .timedOut {
            kill(process.processIdentifier, SIGKILL)
            exited.wait()
            return nil
        }
        output.waitForEnd()
        return process.terminationReason == .exit ? process.terminationStatus : nil
    }
}
