import BenchSupport
import Foundation
import Histogram

#if canImport(Glibc)
import Glibc
#endif

/// The side-by-side results, as a terminal table and as a markdown snippet for docs/benchmarks.md.
struct Report {
    var rounds: [UVBench.Round]
    var latency: Histogram<UInt64>
    var allocations: AllocationCount?
    var connections: Int
    var seconds: Int
    var goal: Double
    var server: NginxServer
    /// The markdown heading's start (the HTTPS run says so, and which TLS it negotiated in `detail`).
    var title = "HTTP/1.1 keep-alive GET"
    /// A sentence added to the markdown's description.
    var detail: String?
    /// The run-on-loop mode's goal and allocations (its figures are in the rounds, when it ran).
    var onLoopGoal: Double = 1.0
    var onLoopAllocations: AllocationCount?

    var hasOnLoop: Bool { rounds.contains { $0.onLoop != nil } }
    var onLoopMedian: Double { median(rounds.compactMap { $0.onLoop?.requestsPerSecond }) }
    var onLoopRatio: Double { wrkMedian > 0 ? onLoopMedian / wrkMedian : 0 }
    var onLoopCPUPerRequest: Double {
        median(rounds.compactMap { round in
            zip2(round.onLoop, round.onLoopCPU).map { $1.total / Double(max(1, $0.completed)) }
        })
    }
    var onLoopCores: Double {
        median(rounds.compactMap { round in zip2(round.onLoop, round.onLoopCPU).map { $1.total / 1e6 / max($0.elapsed, 1e-9) } })
    }
    var onLoopNginxPerRequest: Double? {
        let values = rounds.compactMap { round in
            zip2(round.onLoop, round.onLoopNginxCPU).map { $1 / Double(max(1, $0.completed)) }
        }
        return values.isEmpty ? nil : median(values)
    }
    /// The run-on-loop rounds' latencies together.
    var onLoopLatency: Histogram<UInt64>? {
        var merged: Histogram<UInt64>?
        for latency in rounds.compactMap(\.onLoop?.latency) {
            if merged == nil { merged = latency } else { merged!.add(latency) }
        }
        return merged
    }
    private func onLoopPercentile(_ percentile: Double) -> String {
        onLoopLatency.map { formatMicros(Double($0.valueAtPercentile(percentile)) / 1e3) } ?? "n/a"
    }

    /// The bare libuv+llhttp loop (the design's ceiling), when it ran.
    var hasBare: Bool { rounds.contains { $0.bare != nil } }
    var bareMedian: Double { median(rounds.compactMap { $0.bare?.requestsPerSecond }) }
    var bareRatio: Double { wrkMedian > 0 ? bareMedian / wrkMedian : 0 }
    var bareCPUPerRequest: Double {
        median(rounds.compactMap { round in zip2(round.bare, round.bareCPU).map { $1.total / Double(max(1, $0.completed)) } })
    }
    private var bareSummary: String {
        "bare libuv+llhttp loop (the design's ceiling): median \(formatRate(bareMedian)) req/s, "
            + String(format: "%.2fx wrk (rounds ", bareRatio)
            + rounds.compactMap { round in round.bare.map { String(format: "%.3f", $0.requestsPerSecond / round.wrk.requestsPerSecond) } }
                .joined(separator: ", ")
            + String(format: "), client CPU %.2f µs/request", bareCPUPerRequest)
    }

    var wrkMedian: Double { median(rounds.map(\.wrk.requestsPerSecond)) }
    var oursMedian: Double { median(rounds.map(\.ours.requestsPerSecond)) }
    var ratio: Double { wrkMedian > 0 ? oursMedian / wrkMedian : 0 }
    var errors: Int { rounds.reduce(0) { $0 + $1.ours.errors + ($1.onLoop?.errors ?? 0) + ($1.bare?.errors ?? 0) } }
    var wrkErrors: Int { rounds.reduce(0) { $0 + $1.wrk.errors } }

    var verdict: String {
        if errors > 0 { return "INVALID: \(errors) UVNetworking request(s) failed or returned the wrong response" }
        let met = ratio >= goal
        var verdict = (met ? "GOAL MET: " : "goal missed: ")
            + String(format: "UVNetworking/wrk = %.2fx of wrk's median (goal %.2fx)", ratio, goal)
        if hasOnLoop {
            verdict += (onLoopRatio >= onLoopGoal ? "; run-on-loop GOAL MET: " : "; run-on-loop goal missed: ")
                + String(format: "%.2fx (goal %.2fx)", onLoopRatio, onLoopGoal)
        }
        return verdict
    }

    // Per-request figures (medians over the rounds).
    var oursCPUPerRequest: Double { median(rounds.map { $0.oursCPU.total / Double(max(1, $0.ours.completed)) }) }
    var wrkCPUPerRequest: Double { median(rounds.map { $0.wrk.cpuMicroseconds / Double(max(1, $0.wrk.requests)) }) }
    var oursCores: Double { median(rounds.map { $0.oursCPU.total / 1e6 / max($0.ours.elapsed, 1e-9) }) }
    var wrkCores: Double { median(rounds.map { $0.wrk.cpuMicroseconds / 1e6 / Double(seconds) }) }
    var nginxPerRequestOurs: Double? {
        let values = rounds.compactMap { round in round.oursNginxCPU.map { $0 / Double(max(1, round.ours.completed)) } }
        return values.isEmpty ? nil : median(values)
    }
    var nginxPerRequestWrk: Double? {
        let values = rounds.compactMap { round in round.wrkNginxCPU.map { $0 / Double(max(1, round.wrk.requests)) } }
        return values.isEmpty ? nil : median(values)
    }
    var oursP50: Double { Double(latency.valueAtPercentile(50)) / 1e3 }
    var oursP99: Double { Double(latency.valueAtPercentile(99)) / 1e3 }
    var oursP999: Double { Double(latency.valueAtPercentile(99.9)) / 1e3 }
    var wrkP50: Double? { let values = rounds.compactMap(\.wrk.p50); return values.isEmpty ? nil : median(values) }
    var wrkP99: Double? { let values = rounds.compactMap(\.wrk.p99); return values.isEmpty ? nil : median(values) }

    private func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }

    private func lpad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
    }

    private func optionalMicros(_ value: Double?) -> String { value.map(formatMicros) ?? "n/a" }

    func text() -> String {
        var lines: [String] = []
        let onLoop = hasOnLoop
        lines.append("\(pad("", 10))\(lpad("wrk -t1 -c\(connections)", 18))\(lpad("UVNetworking", 18))\(lpad("ratio", 10))"
                     + (onLoop ? "\(lpad("on loop", 18))\(lpad("ratio", 10))" : ""))
        lines.append("\(pad("", 10))\(lpad("req/s", 18))\(lpad("req/s", 18))\(onLoop ? pad("", 10) + lpad("req/s", 18) : "")")
        for (index, round) in rounds.enumerated() {
            let errors = round.ours.errors + (round.onLoop?.errors ?? 0)
            let flag = errors > 0 ? "  INVALID (\(errors) errors)" : ""
            let onLoopColumns = round.onLoop.map {
                "\(lpad(formatRate($0.requestsPerSecond), 18))"
                    + "\(lpad(String(format: "%.3f", $0.requestsPerSecond / round.wrk.requestsPerSecond), 10))"
            } ?? ""
            lines.append("\(pad("round \(index + 1)", 10))\(lpad(formatRate(round.wrk.requestsPerSecond), 18))"
                         + "\(lpad(formatRate(round.ours.requestsPerSecond), 18))"
                         + "\(lpad(String(format: "%.3f", round.ours.requestsPerSecond / round.wrk.requestsPerSecond), 10))"
                         + onLoopColumns + flag)
        }
        lines.append("\(pad("median", 10))\(lpad(formatRate(wrkMedian), 18))\(lpad(formatRate(oursMedian), 18))"
                     + "\(lpad(String(format: "%.3f", ratio), 10))"
                     + (onLoop ? "\(lpad(formatRate(onLoopMedian), 18))\(lpad(String(format: "%.3f", onLoopRatio), 10))" : ""))
        if hasBare { lines.append(bareSummary) }
        lines.append("")
        let third = { (value: String) in onLoop ? self.lpad(value, 16) : "" }
        lines.append("\(pad("per request (medians of rounds)", 40))\(lpad("UVNetworking", 16))\(lpad("wrk", 16))\(third("on loop"))")
        lines.append("\(pad("client CPU, user+sys, whole process", 40))\(lpad(String(format: "%.2f µs", oursCPUPerRequest), 16))"
                     + "\(lpad(String(format: "%.2f µs", wrkCPUPerRequest), 16))\(third(String(format: "%.2f µs", onLoopCPUPerRequest)))")
        lines.append("\(pad("client cores busy", 40))\(lpad(String(format: "%.2f", oursCores), 16))\(lpad(String(format: "%.2f", wrkCores), 16))"
                     + third(String(format: "%.2f", onLoopCores)))
        lines.append("\(pad("nginx worker CPU", 40))\(lpad(nginxPerRequestOurs.map { String(format: "%.2f µs", $0) } ?? "n/a", 16))"
                     + "\(lpad(nginxPerRequestWrk.map { String(format: "%.2f µs", $0) } ?? "n/a", 16))"
                     + third(onLoopNginxPerRequest.map { String(format: "%.2f µs", $0) } ?? "n/a"))
        lines.append("\(pad("latency p50", 40))\(lpad(formatMicros(oursP50), 16))\(lpad(optionalMicros(wrkP50), 16))\(third(onLoopPercentile(50)))")
        lines.append("\(pad("latency p99", 40))\(lpad(formatMicros(oursP99), 16))\(lpad(optionalMicros(wrkP99), 16))\(third(onLoopPercentile(99)))")
        lines.append("\(pad("latency p99.9", 40))\(lpad(formatMicros(oursP999), 16))\(onLoop ? lpad("n/a", 16) : "")\(third(onLoopPercentile(99.9)))")
        if let onLoopAllocations {
            lines.append("\(pad("allocations on loop (all threads)", 40))"
                         + "\(lpad(String(format: "%.2f", onLoopAllocations.perRequest(onLoopAllocations.allocations)), 16))")
        }
        if let allocations {
            lines.append("\(pad("allocations (malloc family, all threads)", 40))"
                         + "\(lpad(String(format: "%.2f", allocations.perRequest(allocations.allocations)), 16))")
            lines.append("\(pad("reallocs / frees", 40))"
                         + "\(lpad(String(format: "%.2f / %.2f", allocations.perRequest(allocations.reallocations), allocations.perRequest(allocations.frees)), 16))")
            lines.append("\(pad("bytes requested", 40))\(lpad(String(format: "%.0f B", allocations.perRequest(allocations.bytes)), 16))")
            lines.append("  (allocations counted over \(allocations.requests) requests, \(connections) in flight, warm connections)")
        } else {
            lines.append("allocations: not counted")
        }
        if wrkErrors > 0 { lines.append("note: wrk reported \(wrkErrors) socket errors or non-2xx responses") }
        lines.append("")
        lines.append(verdict)
        return lines.joined(separator: "\n")
    }

    func markdown() -> String {
        let commit = gitDescription()
        var md: [String] = []
        md.append("### \(title), \(server.body.utf8.count)-byte body, \(connections) in flight")
        md.append("")
        md.append("Measured by `make bench` (Benchmarks/uvbench) on \(machineDescription()), nginx with 1 worker on 127.0.0.1, "
                  + "\(rounds.count) rounds of \(seconds) s per client, alternating in one run\(commit.map { ", commit \($0)" } ?? "").")
        md.append("UVNetworking runs through its public task API: `SessionManager.dataTask` + `resume()`, "
                  + "`HTTPResponseSerializer`, a serial completion queue; each completion checks the response and resumes the next task."
                  + (hasOnLoop ? " \"On loop\" is the same with `deliversOnEventLoop` (completions on the loop thread, the next "
                     + "task resumed there inline)." : "")
                  + (detail.map { " " + $0 } ?? ""))
        md.append("")
        let onLoop = hasOnLoop
        md.append("| round | wrk -t1 -c\(connections) (req/s) | UVNetworking (req/s) | ratio |"
                  + (onLoop ? " on loop (req/s) | ratio |" : ""))
        md.append("|---|---:|---:|---:|" + (onLoop ? "---:|---:|" : ""))
        for (index, round) in rounds.enumerated() {
            let onLoopCells = round.onLoop.map {
                " \(formatRate($0.requestsPerSecond))\($0.errors > 0 ? " (invalid: \($0.errors) errors)" : "") | "
                    + String(format: "%.3f", $0.requestsPerSecond / round.wrk.requestsPerSecond) + " |"
            } ?? ""
            md.append("| \(index + 1) | \(formatRate(round.wrk.requestsPerSecond)) | \(formatRate(round.ours.requestsPerSecond))"
                      + "\(round.ours.errors > 0 ? " (invalid: \(round.ours.errors) errors)" : "") | "
                      + String(format: "%.3f", round.ours.requestsPerSecond / round.wrk.requestsPerSecond) + " |" + onLoopCells)
        }
        md.append("| **median** | **\(formatRate(wrkMedian))** | **\(formatRate(oursMedian))** | **"
                  + String(format: "%.2f", ratio) + "x** |"
                  + (onLoop ? " **\(formatRate(onLoopMedian))** | **" + String(format: "%.2f", onLoopRatio) + "x** |" : ""))
        if hasBare {
            md.append("")
            md.append("The " + bareSummary + ": a keep-alive client written straight on libuv and llhttp, in the same rounds.")
        }
        md.append("")
        let cell = { (value: String) in onLoop ? " \(value) |" : "" }
        md.append("| per request (median of rounds) | UVNetworking | wrk |" + cell("on loop"))
        md.append("|---|---:|---:|" + (onLoop ? "---:|" : ""))
        md.append("| client CPU (user+sys, whole process) | " + String(format: "%.2f µs", oursCPUPerRequest)
                  + " | " + String(format: "%.2f µs", wrkCPUPerRequest) + " |" + cell(String(format: "%.2f µs", onLoopCPUPerRequest)))
        md.append("| client cores busy | " + String(format: "%.2f", oursCores) + " | " + String(format: "%.2f", wrkCores) + " |"
                  + cell(String(format: "%.2f", onLoopCores)))
        md.append("| nginx worker CPU | " + (nginxPerRequestOurs.map { String(format: "%.2f µs", $0) } ?? "n/a") + " | "
                  + (nginxPerRequestWrk.map { String(format: "%.2f µs", $0) } ?? "n/a") + " |"
                  + cell(onLoopNginxPerRequest.map { String(format: "%.2f µs", $0) } ?? "n/a"))
        md.append("| latency p50 / p99 | \(formatMicros(oursP50)) / \(formatMicros(oursP99)) | "
                  + "\(optionalMicros(wrkP50)) / \(optionalMicros(wrkP99)) |" + cell("\(onLoopPercentile(50)) / \(onLoopPercentile(99))"))
        if let allocations {
            md.append("| allocations (malloc family, all threads) | "
                      + String(format: "%.2f", allocations.perRequest(allocations.allocations)) + " | n/a |"
                      + cell(onLoopAllocations.map { String(format: "%.2f", $0.perRequest($0.allocations)) } ?? "n/a"))
        }
        md.append("")
        md.append("Verdict: \(verdict).")
        md.append("")
        return md.joined(separator: "\n")
    }
}

/// The checkout's short commit, with " (with uncommitted changes)" when tracked files differ.
func gitDescription() -> String? {
    let cwd = FileManager.default.currentDirectoryPath
    guard let head = try? runProgram("/usr/bin/git", ["-C", cwd, "rev-parse", "--short", "HEAD"]), head.status == 0 else {
        return nil
    }
    let dirty = (try? runProgram("/usr/bin/git", ["-C", cwd, "status", "--porcelain", "--untracked-files=no"]))
        .map { !$0.output.isEmpty } ?? false
    return head.output.trimmingCharacters(in: .whitespacesAndNewlines) + (dirty ? " (with uncommitted changes)" : "")
}

/// "2026-11-22T06:11:49Z: 2 cores, Linux 6.18.44": when and where a run was measured.
func machineDescription() -> String {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withFullDate, .withTime, .withColonSeparatorInTime, .withTimeZone]
    var utsname = utsname()
    uname(&utsname)
    let kernel = withUnsafeBytes(of: &utsname.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    return "\(formatter.string(from: Date())): \(ProcessInfo.processInfo.activeProcessorCount) cores, Linux \(kernel)"
}
