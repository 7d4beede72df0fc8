import Foundation

/// The built `uvfetch` executable, `.build/debug/uvfetch`, which `swift build --build-tests`
/// builds next to the tests.
let uvfetchPath = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent(".build/debug/uvfetch").path

/// A `uvfetch` child process whose standard output and error go to files (no pipe to fill up
/// and stall it), read once it has exited.
final class UVFetchChild: @unchecked Sendable {
    // @unchecked: used from the test's thread only.
    let process = Process()
    private let outputFile: URL
    private let errorFile: URL

    /// Starts `uvfetch arguments...` (or `executable`, `ip netns exec ... uvfetch` say) with
    /// `environment` added to this process's, stdin from `stdin` (a file) or nothing.
    init(_ arguments: [String], executable: String = uvfetchPath, environment: [String: String] = [:], stdin: URL? = nil) throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("uvfetch-child-\(UUID().uuidString)")
        outputFile = base.appendingPathExtension("out")
        errorFile = base.appendingPathExtension("err")
        _ = FileManager.default.createFile(atPath: outputFile.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errorFile.path, contents: nil)
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = try FileHandle(forWritingTo: outputFile)
        process.standardError = try FileHandle(forWritingTo: errorFile)
        process.standardInput = try stdin.map { try FileHandle(forReadingFrom: $0) } ?? FileHandle.nullDevice
        try process.run()
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        try? FileManager.default.removeItem(at: outputFile)
        try? FileManager.default.removeItem(at: errorFile)
    }

    /// Waits up to `timeout` seconds; kills it (SIGKILL) if it has not exited. True if it exited.
    @discardableResult
    func wait(timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        guard !process.isRunning else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return false
        }
        process.waitUntilExit()
        return true
    }

    func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    var status: Int32 { process.terminationStatus }
    var stdout: String { (try? String(contentsOf: outputFile, encoding: .utf8)) ?? "" }
    var stderr: String { (try? String(contentsOf: errorFile, encoding: .utf8)) ?? "" }
}

/// What a finished `uvfetch` run printed and how it exited.
struct UVFetchRun {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Runs `uvfetch` to its end (killed after `timeout` seconds).
func uvfetch(_ arguments: [String], environment: [String: String] = [:], stdin: URL? = nil, timeout: Double = 120) throws -> UVFetchRun {
    let child = try UVFetchChild(arguments, environment: environment, stdin: stdin)
    let exited = child.wait(timeout: timeout)
    return UVFetchRun(status: exited ? child.status : -1, stdout: child.stdout, stderr: child.stderr)
}

/// A file in a fresh temporary directory, written with `contents`.
func temporaryFile(_ name: String, _ contents: Data) throws -> URL {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("uvfetch-queue-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let file = directory.appendingPathComponent(name)
    try contents.write(to: file)
    return file
}

/// Polls `condition` every 50 ms until it holds or `timeout` seconds pass.
func waitUntil(timeout: Double, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if try condition() { return true }
        usleep(50_000)
    }
    return try condition()
}
