import ArgumentParser
import UVFetchCore

/// `uvfetch`: the root command. `uvfetch URL...` runs `fetch`, the default subcommand, so every
/// command line that worked before subcommands existed still does; `uvfetch demo` runs the demo.
@main
struct UVFetch: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "uvfetch",
        abstract: "Fetch URLs concurrently with UVNetworking.",
        discussion: """
            `uvfetch URL...` is `uvfetch fetch URL...`; see `uvfetch fetch --help` for its options.
            \(ExitStatus.help)
            """,
        subcommands: [Fetch.self, Demo.self, Queue.self, Worker.self],
        defaultSubcommand: Fetch.self)
}
