import BenchSupport
import Foundation

/// One round: h2load, then UVNetworking, against the same server.
struct H2Round {
    var h2load: H2LoadResult
    var h2loadServerCPU: Double?
    var ours: LoadResult
    /// This process's CPU over the round (µs): the client, its loop and its completion queue.
    var oursCPU: Double
    var oursServerCPU: Double?
}

/// The rounds of one shape over one transport.
struct ShapeResult {
    var name: String
    var connections: Int
    var streams: Int
    /// Connections the session had open after the warm-up (should be `connections`).
    var openedConnections = 0
    var rounds: [H2Round] = []
    var allocationsPerRequest: Double?

    var h2loadMedian: Double { median(rounds.map(\.h2load.requestsPerSecond)) }
    var oursMedian: Double { median(rounds.map(\.ours.requestsPerSecond)) }
    var ratio: Double { oursMedian / max(1, h2loadMedian) }
    var h2loadCPUPerRequest: Double { median(rounds.map { $0.h2load.cpuMicroseconds / Double(max(1, $0.h2load.succeeded)) }) }
    var oursCPUPerRequest: Double { median(rounds.map { $0.oursCPU / Double(max(1, $0.ours.completed)) }) }
    var invalid: String? {
        for round in rounds {
            if !round.ours.isValid { return "\(name): \(round.ours.errors) request(s) failed; first: \(round.ours.firstError ?? "?")" }
            if round.h2load.failed > 0 { return "\(name): h2load saw \(round.h2load.failed) failure(s)" }
        }
        return nil
    }
}

/// Our client over HTTP/1.1, the same work against nginx.
struct HTTP1Reference {
    var inFlight: Int
    var runs: [(LoadResult, Double)]
    var allocationsPerRequest: Double?
    var requestsPerSecond: Double { median(runs.map { $0.0.requestsPerSecond }) }
    var cpuPerRequest: Double { median(runs.map { $0.1 / Double(max(1, $0.0.completed)) }) }
}

struct IdleResult {
    var connections: Int
    var heapBytes: Int
    var valid: String?
    var bytesPerConnection: Double { Double(heapBytes) / Double(max(1, connections)) }
}

struct OpenStreamsResult {
    var streams: Int
    var connections: Int
    var heapBytes: Int
    var valid: String?
    var bytesPerStream: Double { Double(heapBytes) / Double(max(1, streams)) }
}

/// The first error of the tasks of a measure, kept from any thread.
final class FailureLog: @unchecked Sendable {
    private let lock = NSLock()
    private var firstError: String?
    func note(_ error: any Error) {
        lock.lock()
        if firstError == nil { firstError = "\(error)" }
        lock.unlock()
    }
    var first: String? {
        lock.lock()
        defer { lock.unlock() }
        return firstError
    }
}

struct SequentialResult {
    var streams: Int
    var connections: Int
    var growthBytes: Int
    var valid: String?
}

/// What h2bench prints and writes as markdown.
struct H2Report {
    var seconds: Int
    var rounds: Int
    var goal: Double
    var shapes: [ShapeResult] = []
    var http1: HTTP1Reference?
    var idle: IdleResult?
    var open: OpenStreamsResult?
    var sequential: SequentialResult?

    var firstInvalid: String? {
        shapes.lazy.compactMap(\.invalid).first
            ?? http1?.runs.first { !$0.0.isValid }.map { "HTTP/1.1 reference: \($0.0.firstError ?? "errors")" }
            ?? idle?.valid ?? open?.valid ?? sequential?.valid
    }

    func markdown() -> String {
        var text = """
        ### HTTP/2: h2load against UVNetworking (nghttpd, one worker)

        Small GETs (12-byte body) with C connections of M streams each, h2load -t1 and the task API \
        taking turns, \(rounds) rounds of \(seconds) s; medians. CPU per request is the client's \
        (user + system over the round). Goal: at least \(String(format: "%.2f", goal))x h2load.

        | Transport, C×M | h2load req/s | UVNetworking req/s | ratio | connections opened | h2load CPU µs/req | our CPU µs/req | our allocations/req |
        |---|---:|---:|---:|---:|---:|---:|---:|

        """
        for shape in shapes {
            let verdict = shape.ratio >= goal ? "" : " (missed)"
            text += "| \(shape.name) | \(formatRate(shape.h2loadMedian)) | \(formatRate(shape.oursMedian)) | "
                + String(format: "%.2fx%@ | %d | %.2f | %.2f | %@ |\n", shape.ratio, verdict, shape.openedConnections,
                         shape.h2loadCPUPerRequest, shape.oursCPUPerRequest,
                         shape.allocationsPerRequest.map { String(format: "%.1f", $0) } ?? "–")
        }
        text += "\nEach round, in order (h2load / UVNetworking req/s):\n\n"
        for shape in shapes {
            let list = shape.rounds.map { "\(formatRate($0.h2load.requestsPerSecond)) / \(formatRate($0.ours.requestsPerSecond))" }
            text += "- \(shape.name): \(list.joined(separator: ", "))\n"
        }
        if let http1, let h2c = shapes.first(where: { $0.name.hasPrefix("h2c") }) {
            let below = h2c.oursCPUPerRequest < http1.cpuPerRequest
            text += """

            **CPU per request, HTTP/2 against HTTP/1.1.** The same work (\(http1.inFlight) small GETs in \
            flight): over h2c (\(h2c.name)) our client spent \(String(format: "%.2f", h2c.oursCPUPerRequest)) µs \
            per request; over HTTP/1.1 to nginx (\(http1.inFlight) connections, \(formatRate(http1.requestsPerSecond)) \
            req/s) \(String(format: "%.2f", http1.cpuPerRequest)) µs\
            \(http1.allocationsPerRequest.map { String(format: ", %.1f allocations per request", $0) } ?? ""). \
            HTTP/2 is \(below ? "below" : "NOT below") HTTP/1.1.

            """
        }
        if let idle {
            text += """

            **An idle HTTP/2 connection** (h2c, after one request; \(idle.connections) opened at once, nghttpd \
            allowing one stream each): \(String(format: "%.0f", idle.bytesPerConnection)) bytes of client heap \
            per connection (glibc `mallinfo2`, nghttp2's session and our connection included; kernel \
            buffers not counted).

            """
        }
        if let open {
            text += """

            **An open stream** (h2c, \(open.streams) POSTs at once on \(open.connections) connection(s), each \
            body sent one byte and waiting, so no response yet): \(String(format: "%.0f", open.bytesPerStream)) \
            bytes of client heap per stream, its task, runner and request body pump included (and the \
            caller's AsyncStream that feeds the body).

            """
        }
        if let sequential {
            text += """

            **\(sequential.streams) streams in sequence** on one h2c connection (after 1,000 first; \
            \(sequential.connections) connection(s) open at the end): the heap changed by \
            \(sequential.growthBytes) bytes.

            """
        }
        return text
    }
}
