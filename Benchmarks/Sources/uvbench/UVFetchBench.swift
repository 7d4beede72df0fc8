import BenchSupport
import Foundation

/// uvfetch against wrk on the same URL, taking turns (issue #14's goal: uvfetch at no less than
/// 0.8x wrk). uvfetch fetches one URL `--repeat` times with wrk's concurrency; its rate is the
/// count over the process's wall time, start-up included (a few milliseconds in a run of
/// seconds). The count is sized from wrk's warm-up rate, so that each run lasts about a round.
struct UVFetchBench {
    struct Round {
        var wrk: WrkResult
        var requests: Int
        var seconds: Double
        var uvfetchRate: Double { Double(requests) / seconds }
        var ratio: Double { uvfetchRate / wrk.requestsPerSecond }
    }

    var executable: String
    var wrk: String
    var connections: Int
    var seconds: Int
    var rounds: Int

    func run(url: URL) throws -> [Round] {
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw BenchError("uvfetch not found at \(executable)")
        }
        let warm = try Wrk.run(executable: wrk, url: url, connections: connections, seconds: 1)
        let requests = max(10_000, Int(warm.requestsPerSecond * Double(seconds)))
        _ = try fetch(url: url, requests: requests / 4)
        say("uvbench: uvfetch vs wrk, \(rounds) rounds; uvfetch fetches \(requests) times per round, \(connections) in flight")
        var results: [Round] = []
        for index in 1...rounds {
            let wrkResult = try Wrk.run(executable: wrk, url: url, connections: connections, seconds: seconds)
            let elapsed = try fetch(url: url, requests: requests)
            let round = Round(wrk: wrkResult, requests: requests, seconds: elapsed)
            results.append(round)
            say(String(format: "  round %d: wrk %9.0f req/s   uvfetch %9.0f req/s   ratio %.3f",
                       index, wrkResult.requestsPerSecond, round.uvfetchRate, round.ratio))
        }
        return results
    }

    /// One uvfetch run; its wall time in seconds. Fails unless it exits 0 (every URL fetched).
    private func fetch(url: URL, requests: Int) throws -> Double {
        let start = monotonicNanoseconds()
        let (status, output) = try runProgram(executable, [
            url.absoluteString, "--repeat", String(requests), "--concurrency", String(connections),
            "--per-host", String(connections), "--quiet",
        ], mergeStandardError: true)
        let elapsed = Double(monotonicNanoseconds() - start) / 1e9
        guard status == 0 else { throw InvalidRun(firstError: "uvfetch exited with status \(status): \(output.prefix(500))", errors: 1) }
        return elapsed
    }

    static func markdown(_ rounds: [Round], goal: Double) -> String {
        var lines = [
            "### uvfetch --repeat against wrk, same URL, \(rounds.first.map { String($0.requests) } ?? "?") requests per uvfetch run",
            "",
            "| round | wrk -t1 (req/s) | uvfetch (req/s) | ratio |",
            "|---|---:|---:|---:|",
        ]
        for (index, round) in rounds.enumerated() {
            lines.append("| \(index + 1) | \(formatRate(round.wrk.requestsPerSecond)) | \(formatRate(round.uvfetchRate)) | \(String(format: "%.3f", round.ratio)) |")
        }
        let wrkMedian = median(rounds.map(\.wrk.requestsPerSecond))
        let oursMedian = median(rounds.map(\.uvfetchRate))
        let ratio = oursMedian / max(1, wrkMedian)
        lines.append("| **median** | **\(formatRate(wrkMedian))** | **\(formatRate(oursMedian))** | **\(String(format: "%.2fx", ratio))** |")
        lines.append("")
        lines.append("Verdict: goal \(ratio >= goal ? "met" : "missed"): uvfetch/wrk = \(String(format: "%.2fx", ratio)) (goal \(String(format: "%.2fx", goal))).")
        lines.append("")
        return lines.joined(separator: "\n")
    }
}
