// uvnetworking-service-probe: a ServiceGroup running SessionManagerService and a service that
// keeps requests in flight against a slow loopback server, stopped by SIGTERM from the test that
// started it (in a child process, so a crash or a hang fails that test only).
//
// argv[1] names the scenario:
//   drain     the server answers after 0.5 s, the grace period is 10 s: every request completes
//   deadline  the server answers after 30 s, the grace period is 0.3 s: every request is cancelled
// Prints "ready" once the requests are in flight, then, after the group has returned, one line
// "completed=N cancelled=N other=N calls=N connections=N". Exits 0 when the outcomes are the
// scenario's, 1 when they are not, 2 when completions never came, 64 for an unknown scenario.

import Dispatch
import Foundation
import Logging
import ServiceLifecycle
@_spi(Testing) import UVNetworking
import UVNetworkingServiceLifecycle

/// Writes a line to standard output at once (the test reads it while the probe runs).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let scenarios: [String: (delay: Double, grace: Duration)] = [
    "drain": (0.5, .seconds(10)),
    "deadline": (30, .milliseconds(300)),
]
guard CommandLine.arguments.count > 1, let scenario = scenarios[CommandLine.arguments[1]] else {
    say("unknown scenario; one of \(scenarios.keys.sorted())")
    exit(64)
}

let requestCount = 4
let server = try SlowServer(delay: scenario.delay)
let manager = SessionManager()
manager.completionQueue = DispatchQueue(label: "uvnetworking.service-probe.completions")
let completions = DispatchGroup()
manager.completionGroup = completions
let outcomes = Outcomes()

let group = ServiceGroup(configuration: ServiceGroupConfiguration(
    services: [
        SessionManagerService(manager: manager, gracePeriod: scenario.grace),
        RequestsInFlight(manager: manager, url: URL(string: "http://127.0.0.1:\(server.port)/slow")!, count: requestCount, outcomes: outcomes),
    ],
    gracefulShutdownSignals: [.sigterm],
    logger: Logger(label: "uvnetworking.service-probe")))
try await group.run()

guard completions.wait(timeout: .now() + 10) == .success else {
    say("hang: completions never came")
    exit(2)
}
let seen = outcomes.counts
say("completed=\(seen.completed) cancelled=\(seen.cancelled) other=\(seen.other) calls=\(seen.calls) connections=\(manager.openConnectionCount)")
let expected = CommandLine.arguments[1] == "drain" ? (requestCount, 0) : (0, requestCount)
exit(seen.completed == expected.0 && seen.cancelled == expected.1 && seen.calls == requestCount
     && manager.openConnectionCount == 0 ? 0 : 1)
