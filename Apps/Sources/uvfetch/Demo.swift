import ArgumentParser
import Foundation
import LoopbackHTTPServer
import UVFetchCore

/// `uvfetch demo`: starts an embedded loopback HTTP server and fetches generated URLs from it,
/// printing one line about the run, then the summary `fetch` prints. The logic is `FetchDemo`.
struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Fetch /items/0... from an embedded loopback HTTP server (no network needed).",
        discussion: ExitStatus.help)

    @Option(name: .long, help: "URLs to fetch.")
    var count = FetchDemo().count

    @Option(name: .long, help: "Requests in flight at once.")
    var concurrency = FetchDemo().concurrency

    @Option(name: .long, help: "Connections to the server.")
    var perHost = FetchDemo().perHost

    @Flag(name: .shortAndLong, help: "No progress line.")
    var quiet = false

    func validate() throws {
        guard count > 0, concurrency > 0, perHost > 0 else { throw ValidationError("counts must be positive") }
    }

    func run() throws {
        ClosedPipe.prepare()
        var demo = FetchDemo()
        demo.count = count
        demo.concurrency = concurrency
        demo.perHost = perHost
        demo.showsProgress = !quiet && FetchRunner.standardOutputIsTerminal
        let outcome: FetchDemo.Outcome
        // Written, not printed: a closed pipe ends the demo as it ends `fetch` (`ClosedPipe`).
        var announcementFailure: WriteFailure?
        do {
            outcome = try demo.run(announce: { line in
                do throws(WriteFailure) { try LineOutput.standardOutput.write(line + "\n") } catch { announcementFailure = error }
            }) { message in
                FileHandle.standardError.write(Data((message + "\n").utf8))
            }
        } catch let error as LoopbackHTTPServerError {
            // Nothing was fetched: the run failed as a whole.
            FileHandle.standardError.write(Data("uvfetch: the demo server did not start: \(error)\n".utf8))
            throw ExitCode(ExitStatus.someFailed)
        }
        if let failure = announcementFailure ?? outcome.fetch.writeFailure { throw ClosedPipe.end(after: failure) }
        let statistics = outcome.fetch.statistics
        try ClosedPipe.writeOutput(statistics.summary(seconds: outcome.fetch.seconds) + "\n")
        if statistics.exitStatus != ExitStatus.success { throw ExitCode(statistics.exitStatus) }
    }
}
