import Foundation

/// One h2load run and what it printed.
public struct H2LoadResult: Sendable {
    public var requestsPerSecond: Double
    /// Requests that succeeded (a 2xx).
    public var succeeded: Int
    /// Requests that failed, errored, timed out or had a status other than 2xx.
    public var failed: Int
    /// CPU time h2load used (user + system, µs), from RUSAGE_CHILDREN around the run.
    public var cpuMicroseconds: Double
    public var output: String
}

/// Runs h2load (Debian's nghttp2-client), the HTTP/2 reference client.
public enum H2Load {
    /// `h2load -t1 -c connections -m streams -D seconds url`: one thread, like the one loop
    /// it is measured against.
    public static func run(executable: String = "/usr/bin/h2load", url: URL, connections: Int, streams: Int,
                           seconds: Int) throws -> H2LoadResult {
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw BenchError("h2load not found at \(executable) (apt-get install nghttp2-client)")
        }
        let before = CPUTime.ofChildren()
        let (status, output) = try runProgram(executable, [
            "-t1", "-c\(connections)", "-m\(streams)", "-D", String(seconds), url.absoluteString,
        ], mergeStandardError: true)
        let cpu = CPUTime.ofChildren() - before
        guard status == 0 else { throw BenchError("h2load exited with status \(status):\n\(output)") }
        // "finished in 3.00s, 82922.67 req/s, 3.24MB/s"
        guard let finished = line(starting: "finished in", in: output),
              let rate = finished.split(separator: ",").dropFirst().first?
                .trimmingCharacters(in: .whitespaces).split(separator: " ").first.flatMap({ Double($0) }) else {
            throw BenchError("could not read req/s from h2load's output:\n\(output)")
        }
        // "requests: 248768 total, 248832 started, 248768 done, 248768 succeeded, 0 failed, 0 errored, 0 timeout"
        let counts = line(starting: "requests:", in: output).map(namedCounts) ?? [:]
        // "status codes: 248768 2xx, 0 3xx, 0 4xx, 0 5xx"
        let statuses = line(starting: "status codes:", in: output).map(namedCounts) ?? [:]
        let succeeded = statuses["2xx"] ?? 0
        let failed = (counts["failed"] ?? 0) + (counts["errored"] ?? 0) + (counts["timeout"] ?? 0)
            + (statuses["3xx"] ?? 0) + (statuses["4xx"] ?? 0) + (statuses["5xx"] ?? 0)
        return H2LoadResult(requestsPerSecond: rate, succeeded: succeeded, failed: failed, cpuMicroseconds: cpu.total, output: output)
    }

    private static func line(starting prefix: String, in output: String) -> String? {
        output.split(separator: "\n").first { $0.hasPrefix(prefix) }.map(String.init)
    }

    /// "label: 12 total, 3 failed" as ["total": 12, "failed": 3].
    private static func namedCounts(_ line: String) -> [String: Int] {
        var counts: [String: Int] = [:]
        let list = line.split(separator: ":", maxSplits: 1).last ?? ""
        for item in list.split(separator: ",") {
            let parts = item.split(separator: " ")
            if parts.count >= 2, let value = Int(parts[0]) { counts[String(parts[1])] = value }
        }
        return counts
    }
}
