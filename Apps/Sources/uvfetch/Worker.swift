import ArgumentParser
import Foundation
import Glibc
import Synchronization
import UVFetchCore
import UVFetchQueue
import UVNetworking

/// `uvfetch worker`: claims URLs from the queue in batches, fetches them as `uvfetch` does, and
/// records each URL's result in the database; any number at once, on any number of machines.
struct Worker: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "worker",
        abstract: "Fetch the queue's URLs (see `uvfetch queue`) and record their results in the database.",
        discussion: """
            Claims --batch-size URLs at a time under a lease that it extends while it works; a worker that dies \
            loses its leases when they expire, and another takes them over. Each URL gets exactly one result. \
            Exits once no URL is pending or leased (with --follow, waits for more). ^C and SIGTERM stop claiming, \
            give the URLs in flight --grace seconds, record what finished and hand the rest back.
            \(ExitStatus.help) \(QueueExitStatus.help)
            """)

    @OptionGroup var database: DatabaseOption

    @OptionGroup(title: "Fetching")
    var fetching: FetchRunOptions

    @Option(name: .long, help: "URLs per claim.")
    var batchSize = 100

    @Option(name: .long, help: ArgumentHelp("Seconds a claim holds its URLs; extended every third of it while the worker lives.", valueName: "seconds"))
    var lease = 60.0

    @Option(name: .long, help: ArgumentHelp("Claims after which a URL is recorded as failed (\"abandoned\") instead of fetched again: its workers keep dying while it is in flight.", valueName: "n"))
    var maxClaims = 3

    @Flag(name: .long, help: "Keep polling for new URLs when the queue is empty, until ^C or SIGTERM.")
    var follow = false

    @Option(name: .long, help: ArgumentHelp("Seconds between polls while other workers' leases are out, or with --follow.", valueName: "seconds"))
    var poll = 1.0

    @Option(name: .long, help: ArgumentHelp("Seconds the URLs in flight get to finish after ^C or SIGTERM.", valueName: "seconds"))
    var grace = 5.0

    @OptionGroup(title: "Archive")
    var archive: WARCOptions

    @OptionGroup(title: "Request options")
    var request: RequestOptions

    func validate() throws {
        guard batchSize > 0, maxClaims > 0 else { throw ValidationError("--batch-size and --max-claims must be positive") }
        guard lease >= 1, lease.isFinite else { throw ValidationError("--lease must be at least 1 second") }
        guard poll > 0, poll.isFinite, grace >= 0, grace.isFinite else { throw ValidationError("--poll must be positive, --grace zero or more") }
        _ = try database.settings()
    }

    func run() throws {
        // Before the database's first socket: see `ClosedPipe`.
        ClosedPipe.prepare()
        let directory: OutputDirectory?
        let warc: WARCWriter?
        let cache: HTTPCache?
        // --warc --warc-dedup: payloads archived by any worker of the queue are revisits here.
        let payloads = archive.warc != nil && archive.warcDedup ? FleetPayloads() : nil
        do {
            directory = try fetching.outputDirectory.map { path throws(FetchInputError) in try OutputDirectory(path: path) }
            cache = try fetching.openCache()
            // A worker started again with the same command line continues its archive: the URLs it
            // archived are done in the queue and are never fetched again.
            warc = try archive.makeWriter(command: "worker", options: warcOptions(), continuing: true,
                                       userAgent: request.sentUserAgent, robots: fetching.robots, sharedPayloads: payloads)
        } catch let failure as WriteFailure {
            // The WARC file's first record could not be written (a full disk, /dev/full).
            FileHandle.standardError.write(Data("uvfetch: \(failure)\n".utf8))
            throw ExitCode(ExitStatus.writeError)
        } catch {
            FileHandle.standardError.write(Data("uvfetch: \(error)\n".utf8))
            throw ExitCode(ExitStatus.usage)
        }
        // A queue made by an older uvfetch lacks what this worker's statement uses.
        let db = try database.connect(upgrading: true, sharingPayloads: payloads != nil)
        if let payloads {
            do throws(QueueError) { _ = try db.loadPayloads(into: payloads) } catch { throw databaseFailure(error) }
        }
        var queueSettings = QueueWorker.Settings(owner: QueueWorker.Settings.defaultOwner())
        queueSettings.batchSize = batchSize
        queueSettings.leaseSeconds = lease
        queueSettings.maxClaims = maxClaims
        queueSettings.follow = follow
        queueSettings.pollSeconds = poll
        // The run's slots, its read-ahead (FetchRunner's: max(256, 2 x concurrency)) and two batches.
        queueSettings.claimAhead = fetching.concurrency + max(256, 2 * fetching.concurrency) + 2 * batchSize
        let worker = QueueWorker(database: db, settings: queueSettings, payloads: payloads)
        var settings = fetching.settings()
        settings.onRecord = { worker.collect($0) }
        // The queue keeps each URL's validators: one fetched before is asked for conditionally.
        settings.since = worker.validatorLookup
        settings.cache = cache
        let runner = FetchRunner(options: request, settings: settings, writer: nil, outputDirectory: directory, warc: warc) { message in
            LineOutput.standardError.writeWithin(seconds: 5, message + "\n")
        }
        let stoppedBy = StopSignal()
        // ^C and SIGTERM: no more claims; the URLs in flight get `grace` seconds, then are
        // cancelled (handed back at the end, unrecorded).
        let signals = [(SIGINT, "interrupted", ExitStatus.interrupted), (SIGTERM, "terminated", ExitStatus.terminated)].map { number, word, status in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [grace] in
                guard stoppedBy.take(word: word, status: status) else { return }
                worker.stop()
                DispatchQueue.global().asyncAfter(deadline: .now() + grace) { runner.interrupt(settleSeconds: 1) { _ in } }
                // A database that stops answering must not keep the process alive.
                DispatchQueue.global().asyncAfter(deadline: .now() + grace + 30) {
                    LineOutput.standardError.writeWithin(seconds: 1, "uvfetch: \(word); the database did not answer in time\n")
                    _exit(status)
                }
            }
            source.resume()
            return source
        }
        let summary: QueueWorker.Summary
        do {
            summary = try worker.run(runner)
        } catch let error as NetworkingError {
            FileHandle.standardError.write(Data("uvfetch: \(error)\n".utf8))
            throw ExitCode(ExitStatus.usage)
        }
        signals.forEach { $0.cancel() }
        db.close()
        // Standard output closed (the lines of `uvfetch worker | head`): the run stopped, what
        // finished is recorded and the rest handed back; now end as the fetch command does.
        if let failure = summary.outcome.writeFailure, ClosedPipe.endsBySignal(failure) { ClosedPipe.raiseSignal() }
        var lines: [String] = []
        if let stop = stoppedBy.taken { lines.append("uvfetch: \(stop.word)") }
        if let failure = summary.failure { lines.append("uvfetch: \(failure)") }
        // A WARC write that failed stopped the run: what it had not recorded was handed back.
        if let failure = summary.outcome.writeFailure { lines.append("uvfetch: \(failure)") }
        lines.append(summary.outcome.statistics.summary(seconds: summary.outcome.seconds))
        lines.append(summary.queueLine)
        LineOutput.standardError.writeWithin(seconds: 5, lines.joined(separator: "\n") + "\n")
        if summary.failure != nil { throw ExitCode(QueueExitStatus.databaseError) }
        if summary.outcome.writeFailure != nil { throw ExitCode(ExitStatus.writeError) }
        if let stop = stoppedBy.taken { throw ExitCode(stop.status) }
        if summary.outcome.statistics.exitStatus != ExitStatus.success || summary.abandoned > 0 {
            throw ExitCode(max(summary.outcome.statistics.exitStatus, ExitStatus.someFailed))
        }
    }

    /// The options that shape what was fetched and how fast, for the warcinfo record.
    private func warcOptions() -> [String] {
        ["--batch-size \(batchSize)"] + fetching.warcOptions + request.warcOptions
    }
}

/// The first stop signal a worker received.
private final class StopSignal: Sendable {
    private let first = Mutex<(word: String, status: Int32)?>(nil)

    /// Keeps the first; false for a later one.
    func take(word: String, status: Int32) -> Bool {
        first.withLock { first in
            guard first == nil else { return false }
            first = (word, status)
            return true
        }
    }

    var taken: (word: String, status: Int32)? { first.withLock { $0 } }
}
