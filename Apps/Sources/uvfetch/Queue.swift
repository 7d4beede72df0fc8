import ArgumentParser
import Foundation
import UVFetchCore
import UVFetchQueue

/// `uvfetch queue`: the URL queue in PostgreSQL that `uvfetch worker`s drain.
struct Queue: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "queue",
        abstract: "Manage a queue of URLs in PostgreSQL for `uvfetch worker`s on any number of machines.",
        discussion: "See docs/fleet.md. \(QueueExitStatus.help)",
        subcommands: [Init.self, Push.self, Status.self, Results.self])

    /// `uvfetch queue init`.
    struct Init: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create the queue's tables in the database (again: nothing changes).")

        @OptionGroup var database: DatabaseOption

        func run() throws {
            ClosedPipe.prepare()
            let db = try database.connect(checkingSchema: false)
            defer { db.close() }
            do throws(QueueError) { try db.initializeSchema() } catch { throw databaseFailure(error) }
            try ClosedPipe.writeOutput("queue ready in \(db.settings)\n", cleanUp: db.close)
        }
    }

    /// `uvfetch queue push`.
    struct Push: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add URLs to the queue, one per line; URLs already there are skipped.",
            discussion: "Blank lines and # comments are skipped; other lines that are not http(s) URLs are reported and not pushed (exit 1).")

        @OptionGroup var database: DatabaseOption

        @Option(name: [.customShort("i"), .customLong("input")], help: ArgumentHelp("Read URLs from this file (- for stdin).", valueName: "file"))
        var inputPath: String

        @Option(name: .long, help: "URLs per INSERT statement.")
        var batchSize = 1_000

        @Flag(name: .long, help: "Fetch again the URLs already in the queue and finished (done or failed): they go back to pending, and a worker asks for each with the ETag and Last-Modified of its last response, so an unchanged one answers 304 (\"notModified\": true). Its new result replaces the old.")
        var refetch = false

        func validate() throws {
            guard batchSize > 0 else { throw ValidationError("--batch-size must be positive") }
        }

        func run() throws {
            ClosedPipe.prepare()
            let input: URLInput
            do { input = try URLInput(arguments: [], inputPath: inputPath) } catch {
                FileHandle.standardError.write(Data("uvfetch: \(error)\n".utf8))
                throw ExitCode(ExitStatus.usage)
            }
            let db = try database.connect()
            defer { db.close() }
            let counts: PushCounts
            do throws(QueueError) {
                counts = try db.push(input, batchSize: batchSize, refetch: refetch) { FileHandle.standardError.write(Data(($0 + "\n").utf8)) }
            } catch {
                throw databaseFailure(error)
            }
            try ClosedPipe.writeOutput(counts.summary + "\n", cleanUp: db.close)
            if counts.malformed > 0 { throw ExitCode(ExitStatus.someFailed) }
        }
    }

    /// `uvfetch queue status`.
    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the queue's URLs by state, the rate of results, the leases and the workers holding them.")

        @OptionGroup var database: DatabaseOption

        @Flag(name: .long, help: "One JSON object instead of text.")
        var json = false

        func run() throws {
            ClosedPipe.prepare()
            let db = try database.connect()
            defer { db.close() }
            let status: QueueStatus
            do throws(QueueError) { status = try db.status() } catch { throw databaseFailure(error) }
            try ClosedPipe.writeOutput(json ? status.json : status.text, cleanUp: db.close)
        }
    }

    /// `uvfetch queue results`.
    struct Results: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write the recorded results as JSON Lines, the records `uvfetch --jsonl` writes, in push order.")

        @OptionGroup var database: DatabaseOption

        @Option(name: [.customShort("o"), .customLong("output")], help: ArgumentHelp("Write to this file instead of standard output.", valueName: "file"))
        var outputPath = "-"

        func run() throws {
            ClosedPipe.prepare()
            let output: LineOutput
            do { output = try LineOutput.open(path: outputPath) } catch {
                FileHandle.standardError.write(Data("uvfetch: \(error)\n".utf8))
                throw ExitCode(ExitStatus.usage)
            }
            let db = try database.connect()
            defer { db.close() }
            do throws(ResultsError) {
                _ = try db.writeResults(to: output)
            } catch .database(let error) {
                throw databaseFailure(error)
            } catch .write(let failure) {
                db.close()
                throw ClosedPipe.end(after: failure)
            }
        }
    }
}
