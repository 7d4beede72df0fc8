import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A failure of the benchmark harness itself (not of the client under test).
public struct BenchError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Child processes and temporary directories to clean up when the run ends, fails or is
/// interrupted.
public enum Cleanup {
    private struct State {
        var pids: [pid_t] = []
        var directories: [String] = []
    }

    private static let state = Mutex(State())

    static func track(pid: pid_t) { state.withLock { $0.pids.append(pid) } }
    static func untrack(pid: pid_t) { state.withLock { $0.pids.removeAll { $0 == pid } } }
    static func track(directory: String) { state.withLock { $0.directories.append(directory) } }
    static func untrack(directory: String) { state.withLock { $0.directories.removeAll { $0 == directory } } }

    /// Terminates every tracked child and removes every tracked directory.
    public static func runNow() {
        let (pids, directories) = state.withLock { state -> ([pid_t], [String]) in
            defer { state = State() }
            return (state.pids, state.directories)
        }
        for pid in pids { kill(pid, SIGTERM) }
        if !pids.isEmpty { usleep(200_000) }
        for directory in directories { try? FileManager.default.removeItem(atPath: directory) }
    }

    nonisolated(unsafe) private static var signalSources: [DispatchSourceSignal] = []

    /// On SIGINT, SIGTERM or SIGHUP: clean up, then exit with 128 + the signal number.
    public static func installSignalHandlers() {
        for signalNumber in [SIGINT, SIGTERM, SIGHUP] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler {
                FileHandle.standardError.write(Data("\nuvbench: signal \(signalNumber), stopping nginx and wrk\n".utf8))
                runNow()
                exit(128 + signalNumber)
            }
            source.resume()
            signalSources.append(source)
        }
    }
}

/// A loopback TCP port nobody listens on right now (the kernel's choice for port 0).
public func freeLoopbackPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw BenchError("socket() failed: errno \(errno)") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard bound == 0 else { throw BenchError("bind() failed: errno \(errno)") }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let named = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    guard named == 0 else { throw BenchError("getsockname() failed: errno \(errno)") }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// Whether something accepts TCP connections on 127.0.0.1:`port`.
func canConnect(port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(port).bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    } == 0
}

/// Runs a program to completion and returns its exit status and standard output (standard error
/// is appended to the output when `mergeStandardError`).
public func runProgram(_ path: String, _ arguments: [String], mergeStandardError: Bool = false) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    process.environment = childEnvironment()
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = mergeStandardError ? pipe : FileHandle.nullDevice
    process.standardInput = FileHandle.nullDevice
    try process.run()
    Cleanup.track(pid: process.processIdentifier)
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    Cleanup.untrack(pid: process.processIdentifier)
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}

/// Starts `executable` in the background with no standard streams (a server of the bench, a
/// watchdog), tracked for `Cleanup`.
func launchQuietly(_ executable: String, _ arguments: [String]) throws -> Process {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.environment = childEnvironment()
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    Cleanup.track(pid: process.processIdentifier)
    return process
}

/// A shell that ends `child` and removes `directory` once this process is gone: if the bench
/// dies without stopping its servers (a crash, SIGKILL), they go too. Nil if it could not start.
func launchWatchdog(for child: pid_t, removing directory: String) -> Process? {
    let script = "while kill -0 \"$0\" 2>/dev/null; do sleep 1; done; kill -TERM \"$1\" 2>/dev/null; rm -rf \"$2\""
    guard let watchdog = try? launchQuietly("/bin/sh", ["-c", script, String(getpid()), String(child), directory]) else { return nil }
    return watchdog
}

/// Stops a server started with `launchQuietly` (SIGTERM, SIGKILL after 5 s) and its watchdog,
/// and removes its directory.
func stopServer(_ process: Process, watchdog: Process?, directory: String) {
    if process.isRunning {
        process.terminate()
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
    Cleanup.untrack(pid: process.processIdentifier)
    if let watchdog {
        if watchdog.isRunning { watchdog.terminate() }
        Cleanup.untrack(pid: watchdog.processIdentifier)
    }
    try? FileManager.default.removeItem(atPath: directory)
    Cleanup.untrack(directory: directory)
}

/// This process's environment without LD_PRELOAD: the ordo-one benchmark runs under a preloaded
/// malloc interposer, which nginx and wrk must not inherit.
func childEnvironment() -> [String: String] {
    var environment = ProcessInfo.processInfo.environment
    environment["LD_PRELOAD"] = nil
    return environment
}

/// CPU time (user + system) in microseconds.
public struct CPUTime: Sendable {
    public var user: Double
    public var system: Double
    public var total: Double { user + system }

    /// This process, every thread.
    public static func ofSelf() -> CPUTime { read(RUSAGE_SELF.rawValue) }
    /// Every child that has been waited for.
    public static func ofChildren() -> CPUTime { read(RUSAGE_CHILDREN.rawValue) }

    private static func read(_ who: __rusage_who_t) -> CPUTime {
        var usage = rusage()
        getrusage(who, &usage)
        return CPUTime(user: Double(usage.ru_utime.tv_sec) * 1e6 + Double(usage.ru_utime.tv_usec),
                       system: Double(usage.ru_stime.tv_sec) * 1e6 + Double(usage.ru_stime.tv_usec))
    }

    /// CPU time of another process (from /proc/PID/stat), or nil if it cannot be read.
    public static func ofProcess(_ pid: pid_t) -> CPUTime? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        // Fields after "(comm)": state is field 3; utime and stime are fields 14 and 15.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        return CPUTime(user: user / ticks * 1e6, system: system / ticks * 1e6)
    }

    public static func - (lhs: CPUTime, rhs: CPUTime) -> CPUTime {
        CPUTime(user: lhs.user - rhs.user, system: lhs.system - rhs.system)
    }
}

/// Monotonic nanoseconds.
@inline(__always)
public func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
}

/// The children of `pid` (scans /proc).
func childProcesses(of pid: pid_t) -> [pid_t] {
    guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
    var children: [pid_t] = []
    for entry in entries {
        guard let child = pid_t(entry),
              let text = try? String(contentsOfFile: "/proc/\(child)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { continue }
        let fields = text[text.index(after: close)...].split(separator: " ")
        if fields.count > 1, pid_t(fields[1]) == pid { children.append(child) }
    }
    return children
}
