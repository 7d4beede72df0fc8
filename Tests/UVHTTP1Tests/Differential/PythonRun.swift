import Foundation
import Synchronization

/// What a python3 child process printed and how it ended.
struct PythonRun {
    var status: Int32
    var stdout: String
    var stderr: String

    /// Runs `python3 arguments...` in `directory` with no standard input, reading both outputs to
    /// their ends (standard error on a thread of its own, so that neither pipe can fill and stall
    /// the child).
    static func run(_ arguments: [String], in directory: URL) throws -> PythonRun {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3"] + arguments
        process.currentDirectoryURL = directory
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let errorText = Mutex(Data())
        let drained = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            let data = errors.fileHandleForReading.readDataToEndOfFile()
            errorText.withLock { $0 = data }
            drained.signal()
        }
        let out = output.fileHandleForReading.readDataToEndOfFile()
        drained.wait()
        process.waitUntilExit()
        return PythonRun(status: process.terminationStatus, stdout: String(decoding: out, as: UTF8.self),
                         stderr: errorText.withLock { String(decoding: $0, as: UTF8.self) })
    }
}
