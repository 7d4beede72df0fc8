import ArgumentParser
import Dispatch
import Foundation
import Synchronization
import UVNetworking

/// `uvfetch`: fetches URLs concurrently through UVNetworking and reports each result.
///
/// This is the first cut: URLs from the command line, a repeat count and a concurrency limit. The
/// batch-fetcher features (input files, output directories, JSON Lines, retries, progress line)
/// arrive with their own issue.
@main
struct UVFetch: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "uvfetch",
        abstract: "Fetch URLs concurrently with UVNetworking.")

    @Option(name: .long, help: "Requests in flight at once.")
    var concurrency: Int = 64

    @Option(name: .long, help: "Connections per host.")
    var perHost: Int = 64

    @Option(name: [.customLong("repeat")], help: "Fetch the list this many times.")
    var repeatCount: Int = 1

    @Flag(name: .shortAndLong, help: "Print only the summary.")
    var quiet = false

    @Argument(help: "http:// URLs to fetch.")
    var urls: [String]

    func validate() throws {
        guard concurrency > 0, perHost > 0, repeatCount > 0 else { throw ValidationError("counts must be positive") }
        guard !urls.isEmpty else { throw ValidationError("give at least one URL") }
    }

    func run() throws {
        var parsed: [URL] = []
        for text in urls {
            guard let url = URL(string: text) else { throw ValidationError("not a URL: \(text)") }
            parsed.append(url)
        }
        var configuration = SessionConfiguration()
        configuration.maximumConnectionsPerHost = perHost
        let manager = SessionManager(configuration: configuration)
        manager.completionQueue = DispatchQueue(label: "uvfetch.completions")
        manager.responseSerializer = HTTPResponseSerializer()
        let report = Report(quiet: quiet)
        let total = parsed.count * repeatCount
        let slots = DispatchSemaphore(value: concurrency)
        let group = DispatchGroup()
        let started = DispatchTime.now()
        for index in 0..<total {
            let url = parsed[index % parsed.count]
            slots.wait()
            group.enter()
            let begin = DispatchTime.now()
            manager.dataTask(with: Request(url: url), completionHandler: { response, object, error in
                let milliseconds = Double(DispatchTime.now().uptimeNanoseconds - begin.uptimeNanoseconds) / 1e6
                report.record(url: url, status: response?.status.code, bytes: (object as? Data)?.count ?? 0,
                              milliseconds: milliseconds, error: error)
                slots.signal()
                group.leave()
            }).resume()
        }
        group.wait()
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
        manager.invalidateSessionCancelingTasks(false, resetSession: false)
        report.summarize(seconds: seconds)
        if report.failures > 0 { throw ExitCode(1) }
    }
}

/// Results gathered from the completion queue.
final class Report: Sendable {
    private struct Counts { var succeeded = 0; var failed = 0; var bytes = 0 }
    private let counts = Mutex(Counts())
    private let quiet: Bool

    init(quiet: Bool) { self.quiet = quiet }

    var failures: Int { counts.withLock { $0.failed } }

    func record(url: URL, status: Int?, bytes: Int, milliseconds: Double, error: (any Error)?) {
        counts.withLock { counts in
            if error == nil { counts.succeeded += 1 } else { counts.failed += 1 }
            counts.bytes += bytes
        }
        guard !quiet else { return }
        let statusText = status.map(String.init) ?? "-"
        let outcome = error.map { "error: \($0)" } ?? "ok"
        print("\(statusText) \(bytes) bytes \(String(format: "%.1f", milliseconds)) ms \(url.absoluteString) \(outcome)")
    }

    func summarize(seconds: Double) {
        let counts = counts.withLock { $0 }
        let total = counts.succeeded + counts.failed
        print("\(total) requests in \(String(format: "%.2f", seconds)) s: \(counts.succeeded) succeeded, \(counts.failed) failed, "
              + "\(counts.bytes) body bytes, \(String(format: "%.0f", Double(total) / max(seconds, 1e-9))) requests/s")
    }
}
