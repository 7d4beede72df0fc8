import Foundation

/// The example's command line: `[--verbose] [--interval SECONDS] [--grace SECONDS] URL...`.
struct ExampleOptions {
    var urls: [URL] = []
    /// Time between rounds of fetches.
    var interval: Duration = .seconds(5)
    /// How long requests in flight may take to finish at shutdown.
    var gracePeriod: Duration = .seconds(10)
    /// Log at `.debug`, so the library's lines about connections, pools and tasks show.
    var verbose = false

    struct UsageError: Error, CustomStringConvertible {
        var description: String
    }

    init(arguments: [String]) throws {
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "--verbose":
                verbose = true
            case "--interval", "--grace":
                guard let text = rest.popFirst(), let seconds = Double(text), seconds >= 0 else {
                    throw UsageError(description: "\(argument) needs a number of seconds")
                }
                let value = Duration.milliseconds(Int64(seconds * 1000))
                if argument == "--interval" { interval = value } else { gracePeriod = value }
            default:
                guard let url = URL(string: argument), url.scheme == "http" || url.scheme == "https" else {
                    throw UsageError(description: "not an http or https URL: \(argument)")
                }
                urls.append(url)
            }
        }
        guard !urls.isEmpty else { throw UsageError(description: "no URL to fetch") }
    }
}
