import ArgumentParser
import Foundation
import UVFetchCore
import UVNetworking

/// How `uvfetch fetch` and `uvfetch worker` run their requests: one set of options, with one
/// set of names, defaults and checks.
struct FetchRunOptions: ParsableArguments {
    @Option(name: .long, help: "Requests in flight at once.")
    var concurrency: Int = 64

    @Option(name: .long, help: "Connections per host.")
    var perHost: Int = 64

    @Option(name: .long, help: "Event loops (threads) that run the connections; the URLs' origins are spread over them (each origin on one). More than one pays for many hosts over HTTPS (handshakes on several cores).")
    var loops: Int = 1
    /// The most `--loops` taken: far more than the cores of any machine this runs on.
    static let maximumLoops = 1_024

    @Option(name: .long, help: "Connections in total, across hosts; past it an idle connection of another host closes, or the request waits (default: the open-file limit less an eighth).")
    var maxConnections: Int?

    @Option(name: .customLong("rate-per-host"), help: ArgumentHelp("Start at most R requests per second to one host (scheme, host, port); other hosts' URLs go first meanwhile.", valueName: "R"))
    var ratePerHost: Double?

    @Option(name: .customLong("delay-per-host"), help: ArgumentHelp("Wait SECONDS between the starts of two requests to one host, as wget's --wait; with --rate-per-host the larger spacing holds.", valueName: "seconds"))
    var delayPerHost: Double = 0

    @Flag(name: .long, help: "Obey robots.txt (RFC 9309): each origin's is fetched once, before its first URL, with -A's User-Agent; a disallowed URL is not requested and gets a record of kind \"robots\"; a Crawl-delay spaces that host's requests unless --delay-per-host asks more. A robots.txt that answers 4xx allows everything, 5xx or no answer nothing.")
    var robots = false

    @Option(name: .customLong("cache"), help: ArgumentHelp("Go through a private HTTP cache (RFC 9111) kept in this directory (created if missing) across runs; processes may share it. Fresh stored responses answer without a request, stale ones are revalidated; each --jsonl record says \"cache\": hit, revalidated, miss or bypass.", valueName: "dir"))
    var cacheDirectory: String?

    @Option(name: .customLong("cache-size"), help: ArgumentHelp("The most bytes --cache keeps on disk (K, M, G suffixes).", valueName: "bytes"))
    var cacheSize = ByteSize(bytes: 1 << 30)

    @Option(name: .customLong("cache-mode"), help: ArgumentHelp("How requests use --cache, as the Fetch standard's modes: default; reload (fetch and store); no-cache (revalidate every stored response); force-cache (a stored response however stale, else fetch); only-if-cached (a stored response however stale, else fail without a request); no-store (the cache takes no part).", valueName: "mode"))
    var cacheMode: String = "default"

    @Option(name: .customLong("out-dir"), help: ArgumentHelp("Keep each successful body in this directory (created if missing), named after the URL's last path segment; a taken name gets .1, .2, ... Without it bodies are discarded.", valueName: "dir"))
    var outputDirectory: String?

    @Flag(name: .shortAndLong, help: "Print only the summary: no line per URL, no progress line.")
    var quiet = false

    func validate() throws {
        guard concurrency > 0, perHost > 0, loops > 0, maxConnections ?? 1 > 0 else { throw ValidationError("counts must be positive") }
        // Each loop is a thread with descriptors of its own: thousands would only start threads
        // (and a loop whose thread cannot start waits for it forever).
        guard loops <= Self.maximumLoops else { throw ValidationError("--loops must be at most \(Self.maximumLoops)") }
        guard ratePerHost.map({ $0 > 0 && $0.isFinite }) ?? true else { throw ValidationError("--rate-per-host must be a positive number") }
        guard delayPerHost >= 0, delayPerHost.isFinite else { throw ValidationError("--delay-per-host must be zero or more seconds") }
        guard Request.CachePolicy(fetchMode: cacheMode) != nil else {
            throw ValidationError("--cache-mode must be default, reload, no-cache, force-cache, only-if-cached or no-store")
        }
        if cacheDirectory == nil && cacheMode != "default" { throw ValidationError("--cache-mode needs --cache DIR") }
    }

    /// The cache `--cache` names, opened; nil without it. Throws when the directory cannot
    /// be used.
    func openCache() throws(NetworkingError) -> HTTPCache? {
        guard let cacheDirectory else { return nil }
        return try HTTPCache(memoryCapacity: 64 << 20, diskCapacity: Int(clamping: cacheSize.bytes),
                             directory: URL(fileURLWithPath: cacheDirectory))
    }

    /// The options that shape what was fetched and how fast, for a warcinfo record.
    var warcOptions: [String] {
        var options = ["--concurrency \(concurrency)", "--per-host \(perHost)", "--loops \(loops)"]
        if let ratePerHost { options.append("--rate-per-host \(ratePerHost)") }
        if delayPerHost > 0 { options.append("--delay-per-host \(delayPerHost)") }
        if robots { options.append("--robots") }
        if cacheDirectory != nil { options.append("--cache-mode \(cacheMode)") }
        return options
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
        settings.obeysRobots = robots
        settings.cacheMode = Request.CachePolicy(fetchMode: cacheMode) ?? .useProtocolCachePolicy
        settings.printsLines = !quiet
        settings.showsProgress = false
        return settings
    }
}
