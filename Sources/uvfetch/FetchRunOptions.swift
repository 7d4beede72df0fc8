import ArgumentParser
import UVFetchCore

/// How `uvfetch worker` runs its requests: the options `uvfetch fetch` takes for the same,
/// with the same names and defaults.
struct FetchRunOptions: ParsableArguments {
    @Option(name: .long, help: "Requests in flight at once.")
    var concurrency: Int = 64

    @Option(name: .long, help: "Connections per host.")
    var perHost: Int = 64

    @Option(name: .long, help: "Event loops (threads) that run the connections.")
    var loops: Int = 1

    @Option(name: .long, help: "Connections in total, across hosts (default: the open-file limit less an eighth).")
    var maxConnections: Int?

    @Option(name: .customLong("rate-per-host"), help: ArgumentHelp("Start at most R requests per second to one host.", valueName: "R"))
    var ratePerHost: Double?

    @Option(name: .customLong("delay-per-host"), help: ArgumentHelp("Wait SECONDS between the starts of two requests to one host.", valueName: "seconds"))
    var delayPerHost: Double = 0

    @Option(name: .customLong("out-dir"), help: ArgumentHelp("Keep each successful body in this directory (created if missing); without it bodies are discarded.", valueName: "dir"))
    var outputDirectory: String?

    @Flag(name: .shortAndLong, help: "No line per URL on standard output; only the summary (on standard error).")
    var quiet = false

    func validate() throws {
        guard concurrency > 0, perHost > 0, loops > 0, maxConnections ?? 1 > 0 else { throw ValidationError("counts must be positive") }
        guard loops <= 1_024 else { throw ValidationError("--loops must be at most 1024") }
        guard ratePerHost.map({ $0 > 0 && $0.isFinite }) ?? true else { throw ValidationError("--rate-per-host must be a positive number") }
        guard delayPerHost >= 0, delayPerHost.isFinite else { throw ValidationError("--delay-per-host must be zero or more seconds") }
    }

    /// The runner's settings: a line per URL unless `quiet`, never the progress line.
    func settings() -> FetchRunner.Settings {
        var settings = FetchRunner.Settings()
        settings.concurrency = concurrency
        settings.perHost = perHost
        settings.loops = loops
        settings.maxConnections = maxConnections
        settings.ratePerHost = ratePerHost
        settings.delayPerHost = delayPerHost
        settings.printsLines = !quiet
        settings.showsProgress = false
        return settings
    }
}
