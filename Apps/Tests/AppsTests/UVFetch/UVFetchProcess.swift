import Foundation

/// The built `uvfetch` executable, `.build/debug/uvfetch`, which `swift build --build-tests`
/// builds next to the tests.
let uvfetchExecutable = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent(".build/debug/uvfetch")

/// What a `uvfetch` run printed and how it exited.
struct UVFetchResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Runs `uvfetch` with pipes for its standard streams (so standard output is not a terminal),
/// feeding it `stdin` when given, or with `stdinFile` (a regular file, not a pipe) as its standard
/// input.
func runUVFetch(_ arguments: [String], stdin: String? = nil, stdinFile: URL? = nil,
                environment: [String: String]? = nil) throws -> UVFetchResult {
    let process = Process()
    process.executableURL = uvfetchExecutable
    process.arguments = arguments
    if let environment { process.environment = environment }
    let output = Pipe(), errors = Pipe(), input = Pipe()
    process.standardOutput = output
    process.standardError = errors
    process.standardInput = try stdinFile.map { try FileHandle(forReadingFrom: $0) } ?? input
    try process.run()
    if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
    try input.fileHandleForWriting.close()
    // stderr drained on the side: a full pipe would stall the process before stdout ends.
    let errorData = ProcessOutput(reading: errors.fileHandleForReading)
    let out = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return UVFetchResult(status: process.terminationStatus, stdout: String(decoding: out, as: UTF8.self),
                         stderr: String(decoding: errorData.wait(), as: UTF8.self))
}
