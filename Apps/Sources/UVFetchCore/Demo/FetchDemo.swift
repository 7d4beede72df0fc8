import LoopbackHTTPServer

/// `uvfetch demo`: fetches generated URLs from an embedded loopback server, so the whole client
/// can be seen at speed with nothing installed and no network.
///
/// The command only parses its options into one of these and prints what `run` reports.
public struct FetchDemo: Sendable {
    /// URLs to fetch: `/items/0` to `/items/(count-1)`.
    public var count = 100_000
    /// Requests in flight at once.
    public var concurrency = 64
    /// Connections to the server.
    public var perHost = 64

    /// The defaults: 100,000 URLs, 64 in flight, 64 connections.
    public init() {}

    /// What a run produced, and what the summary must say about the server.
    public struct Outcome: Sendable {
        /// The server's port (it is stopped by the time `run` returns).
        public var port: Int
        /// The fetch run itself: counts, latencies, duration.
        public var fetch: FetchRunner.Outcome
    }

    /// Whether to draw the live progress line: on a terminal, unless `--quiet`.
    public var showsProgress = false

    /// The runner's settings for the demo: no per-URL lines, the progress line when asked for.
    /// Made here, in one place, so the command and the tests run the demo alike.
    public func settings() -> FetchRunner.Settings {
        var settings = FetchRunner.Settings()
        settings.concurrency = concurrency
        settings.perHost = perHost
        settings.printsLines = false
        settings.showsProgress = showsProgress
        return settings
    }

    /// The one line announcing the run, printed before it starts.
    public func announcement(port: Int) -> String {
        "uvfetch demo: \(count) GETs of http://127.0.0.1:\(port)/items/0..\(max(count - 1, 0)) from an embedded "
            + "loopback server, \(concurrency) in flight, up to \(perHost) connection\(perHost == 1 ? "" : "s")"
    }

    /// Starts the server, passes `announcement(port:)` to `announce`, fetches every URL, stops
    /// the server and returns the outcome. `diagnostics` gets the runner's standard-error lines.
    /// - Throws: `LoopbackHTTPServerError` when the server cannot listen.
    public func run(announce: (String) -> Void,
                    diagnostics: @escaping @Sendable (String) -> Void) throws -> Outcome {
        let server = LoopbackHTTPServer()
        let port = try server.start()
        defer { server.stop() }
        announce(announcement(port: port))
        // Parsed, not `RequestOptions()`: ArgumentParser only gives values to parsed options.
        let runner = FetchRunner(options: try RequestOptions.parse([]), settings: settings(), writer: nil, diagnostics: diagnostics)
        let outcome = try runner.run(DemoURLs(port: port, count: count), count: { [count] in count })
        return Outcome(port: port, fetch: outcome)
    }
}
