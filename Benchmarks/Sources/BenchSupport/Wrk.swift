import Foundation

/// One wrk run and what it printed.
public struct WrkResult: Sendable {
    public var requestsPerSecond: Double
    public var requests: Int
    /// Socket errors (connect, read, write, timeout) plus non-2xx/3xx responses.
    public var errors: Int
    /// Latency percentiles in microseconds (from `--latency`), when printed.
    public var p50: Double?
    public var p99: Double?
    /// CPU time wrk used (user + system, µs), from RUSAGE_CHILDREN around the run.
    public var cpuMicroseconds: Double
    public var output: String
}

/// Runs wrk, the reference client.
public enum Wrk {
    public static func run(executable: String = "/usr/bin/wrk", url: URL, threads: Int = 1, connections: Int = 64,
                           seconds: Int) throws -> WrkResult {
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw BenchError("wrk not found at \(executable) (apt-get install wrk)")
        }
        let before = CPUTime.ofChildren()
        let (status, output) = try runProgram(executable, [
            "-t\(threads)", "-c\(connections)", "-d\(seconds)s", "--latency", url.absoluteString,
        ], mergeStandardError: true)
        let cpu = CPUTime.ofChildren() - before
        guard status == 0 else { throw BenchError("wrk exited with status \(status):\n\(output)") }
        guard let rate = value(after: "Requests/sec:", in: output).flatMap(Double.init) else {
            throw BenchError("could not read Requests/sec from wrk's output:\n\(output)")
        }
        var errors = 0
        if let line = output.split(separator: "\n").first(where: { $0.contains("Socket errors:") }) {
            // "Socket errors: connect 0, read 0, write 0, timeout 0"
            errors += line.split(whereSeparator: { $0 == " " || $0 == "," }).compactMap { Int($0) }.reduce(0, +)
        }
        if let non2xx = value(after: "Non-2xx or 3xx responses:", in: output).flatMap(Int.init) { errors += non2xx }
        // "  12345 requests in 5.00s, 1.23MB read"
        let requests = output.split(separator: "\n").first { $0.contains(" requests in ") }
            .flatMap { $0.split(separator: " ").first }.flatMap { Int($0) } ?? Int(rate)
        return WrkResult(requestsPerSecond: rate, requests: requests, errors: errors,
                         p50: percentile("50%", in: output), p99: percentile("99%", in: output),
                         cpuMicroseconds: cpu.total, output: output)
    }

    private static func value(after label: String, in output: String) -> String? {
        guard let line = output.split(separator: "\n").first(where: { $0.contains(label) }),
              let range = line.range(of: label) else { return nil }
        return line[range.upperBound...].trimmingCharacters(in: .whitespaces).split(separator: " ").first.map(String.init)
    }

    /// "     50%  512.00us" in the latency distribution, in microseconds.
    private static func percentile(_ label: String, in output: String) -> Double? {
        guard let line = output.split(separator: "\n").first(where: {
            $0.trimmingCharacters(in: .whitespaces).hasPrefix(label + " ")
        }) else { return nil }
        let parts = line.split(separator: " ")
        guard parts.count >= 2 else { return nil }
        return parseDuration(String(parts[1]))
    }

    /// wrk prints durations as "512.00us", "1.23ms" or "2.00s".
    static func parseDuration(_ text: String) -> Double? {
        for (suffix, scale) in [("us", 1.0), ("ms", 1e3), ("m", 60e6), ("s", 1e6)] where text.hasSuffix(suffix) {
            return Double(text.dropLast(suffix.count)).map { $0 * scale }
        }
        return nil
    }
}
