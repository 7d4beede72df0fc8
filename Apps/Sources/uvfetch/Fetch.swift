import ArgumentParser
import Foundation
import Glibc
import UVFetchCore
import UVNetworking

/// `uvfetch [fetch]`: fetches URLs concurrently through UVNetworking and reports each result.
///
/// Only the command line lives here; reading input, sending requests, writing records and
/// counting are in `UVFetchCore`.
struct Fetch: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fetch",
        abstract: "Fetch URLs concurrently with UVNetworking (the default subcommand).",
        discussion: """
            URLs come from the arguments and/or -i FILE (- for stdin), one per line; blank lines and \
            # comments are skipped, other non-http(s) lines are reported and counted as failures.
            \(ExitStatus.help)
            """)

    @OptionGroup(title: "Fetching")
    var running: FetchRunOptions

    @Option(name: [.customLong("repeat")], help: "Fetch the list this many times (-i must then be a regular file, which is read again).")
    var repeatCount: Int = 1

    @Option(name: [.customShort("i"), .customLong("input")], help: ArgumentHelp("Read URLs from this file, one per line (- for stdin).", valueName: "file"))
    var inputPath: String?

    @Option(name: .long, help: ArgumentHelp("Write a JSON Lines record per URL to this file (- for stdout).", valueName: "file"))
    var jsonl: String?

    @Flag(name: .long, help: "Skip the URLs the --jsonl file (a regular file) already has records for, failed ones included, and append to it; a missing file is a fresh run. Continues a run that was interrupted or killed; a URL given twice is fetched once.")
    var resume = false

    @Option(name: .long, help: ArgumentHelp("Ask only for what changed since an earlier run: each URL's \"etag\" and \"lastModified\" from this --jsonl file go out as If-None-Match and If-Modified-Since, and a 304 is a success (\"notModified\": true). It may be the file this run writes: it is read first.", valueName: "file"))
    var since: String?

    @OptionGroup(title: "Archive")
    var archive: WARCOptions

    @OptionGroup(title: "Request options")
    var request: RequestOptions

    @Argument(help: "http(s) URLs to fetch.")
    var urls: [String] = []

    func validate() throws {
        guard repeatCount > 0 else { throw ValidationError("counts must be positive") }
        guard !urls.isEmpty || inputPath != nil else { throw ValidationError("give at least one URL or -i FILE") }
        if resume {
            // The records are what is resumed from: they must be in a file that can be read back.
            guard let jsonl else { throw ValidationError("--resume needs --jsonl FILE, the records of the run it continues") }
            guard jsonl != "-" else { throw ValidationError("--resume needs --jsonl to name a file, not standard output") }
            guard repeatCount == 1 else { throw ValidationError("--resume and --repeat cannot go together: a URL recorded once is not fetched again") }
        }
    }

    func run() throws {
        let ending = RunEnding()
        do {
            let input = try URLInput(arguments: urls, argumentBytes: ArgumentBytes.invalidUTF8(of: urls), inputPath: inputPath,
                                     repeatCount: repeatCount)
            // Before --jsonl opens, which may be the same file.
            let validators = try since.map { path throws(FetchInputError) in try RecordedValidators(path: path) }
            if let validators, let since, validators.skippedLines > 0 {
                FileHandle.standardError.write(Data("uvfetch: --since: \(validators.skippedLines) lines of \(since) are not records, skipped\n".utf8))
            }
            let recorded: RecordedURLs?
            let writer: RecordWriter?
            if resume, let jsonl {
                let records = try ResumableRecords(path: jsonl)
                if let notice = records.notice { FileHandle.standardError.write(Data("uvfetch: \(notice)\n".utf8)) }
                recorded = records.recorded
                writer = RecordWriter(output: records.output)
            } else {
                recorded = nil
                writer = try jsonl.map { path throws(FetchInputError) in try RecordWriter(path: path) }
            }
            // `-`, `/dev/stdout` or the file stdout already is.
            let recordsOnStdout = writer?.isStandardOutput ?? false
            let directory = try running.outputDirectory.map { path throws(FetchInputError) in try OutputDirectory(path: path) }
            let archive = try self.archive.makeWriter(command: "fetch", options: warcOptions(), continuing: resume,
                                                      userAgent: request.sentUserAgent, robots: running.robots)
            var settings = running.settings()
            settings.since = validators
            settings.cache = try running.openCache()
            // JSON Lines on stdout must stay parseable, so the human lines give way to it.
            settings.printsLines = !running.quiet && !recordsOnStdout
            settings.showsProgress = !running.quiet && !recordsOnStdout && FetchRunner.standardOutputIsTerminal
            let runner = FetchRunner(options: request, settings: settings, writer: writer, outputDirectory: directory,
                                     warc: archive, onWriteFailure: { outcome in
                                         if let failure = outcome.writeFailure { ending.afterWriteFailure(failure, outcome) }
                                     }) { message in
                LineOutput.standardError.writeWithin(seconds: 5, message + "\n")
            }
            // ^C and SIGTERM: the summary of what finished, then the shell's code for that death.
            let signals = [(SIGINT, "interrupted", ExitStatus.interrupted), (SIGTERM, "terminated", ExitStatus.terminated)].map { number, word, status in
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler {
                    runner.interrupt { outcome in ending.afterSignal(word, status: status, outcome) }
                    // The completion queue may be stuck writing to a pipe nobody reads: exit
                    // without it. A line there is one write(2) of at most PIPE_BUF bytes, which
                    // a pipe takes whole or not at all.
                    DispatchQueue.global().asyncAfter(deadline: .now() + RunEnding.fallbackSeconds) {
                        // Exchanges archived for records still stuck in that write come back off.
                        runner.abandonUnrecordedArchive()
                        ending.afterSignal(word, status: status, runner.outcomeSoFar(), forced: true)
                    }
                }
                source.resume()
                return source
            }
            let outcome = try runner.run(input, skipping: recorded, count: { input.countEntries() })
            if let failure = outcome.writeFailure { ending.afterWriteFailure(failure, outcome) }
            let summary = outcome.statistics.summary(seconds: outcome.seconds) + "\n"
            // On stdout unless stdout carries the JSON Lines.
            do {
                try (recordsOnStdout ? LineOutput.standardError : LineOutput.standardOutput).write(summary)
            } catch let failure {
                var failed = outcome
                failed.writeFailure = failure
                ending.afterWriteFailure(failure, failed)
            }
            signals.forEach { $0.cancel() }
            if outcome.statistics.exitStatus != ExitStatus.success { throw ExitCode(outcome.statistics.exitStatus) }
        } catch let failure as WriteFailure {
            // The WARC file's first record could not be written (a full disk, /dev/full).
            FileHandle.standardError.write(Data("uvfetch: \(failure)\n".utf8))
            throw ExitCode(ExitStatus.writeError)
        } catch let error as FetchInputError {
            FileHandle.standardError.write(Data("uvfetch: \(error)\n".utf8))
            throw ExitCode(ExitStatus.usage)
        } catch let error as NetworkingError {
            // Only the session's security policy throws before any request: pins it refuses.
            FileHandle.standardError.write(Data("uvfetch: \(error)\n".utf8))
            throw ExitCode(ExitStatus.usage)
        }
    }

    /// The options that shape what was fetched and how fast, for the warcinfo record.
    private func warcOptions() -> [String] {
        running.warcOptions + request.warcOptions
    }
}
