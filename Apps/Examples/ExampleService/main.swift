// uvnetworking-example-service: a small service built on UVNetworking without a web framework.
// A swift-service-lifecycle ServiceGroup runs two services: SessionManagerService, which keeps
// the session up and drains it at shutdown, and PeriodicFetcher, which fetches URLs over and
// over and logs what it got. SIGTERM or SIGINT shut it down gracefully: the fetcher stops after
// the round in flight, the session lets running requests finish within the grace period, and the
// process exits 0, printing its metrics in Prometheus' text format on the way out.
//
// It shows the library's instruments together: swift-log (the session's background logger and a
// logger per request; `--verbose` shows the library's debug lines), swift-metrics with a
// Prometheus backend, and swift-distributed-tracing with a small tracer that logs its spans
// (Observability.swift wires them, LoggingTracer.swift is the tracer).
//
//     uvnetworking-example-service [--verbose] [--interval SECONDS] [--grace SECONDS] URL...

import Foundation
import Logging
import ServiceLifecycle
import UVNetworking
import UVNetworkingServiceLifecycle

let options: ExampleOptions
do {
    options = try ExampleOptions(arguments: Array(CommandLine.arguments.dropFirst()))
} catch {
    FileHandle.standardError.write(Data("\(error)\nusage: uvnetworking-example-service [--verbose] [--interval SECONDS] [--grace SECONDS] URL...\n".utf8))
    exit(64)
}

LoggingSystem.bootstrap(StreamLogHandler.standardOutput)
var logger = Logger(label: "uvnetworking.example-service")
logger.logLevel = options.verbose ? .debug : .info
Observability.bootstrap(logger: logger)

var configuration = SessionConfiguration()
Observability.configure(&configuration, logger: logger)
let manager = SessionManager(configuration: configuration)
// Any body is fine: the example logs sizes, it does not parse.
manager.responseSerializer = HTTPResponseSerializer()

let fetcher = PeriodicFetcher(manager: manager, urls: options.urls, interval: options.interval, logger: logger)
// The session first: the group stops services in reverse order, so the fetcher stops making
// requests before the session drains.
let group = ServiceGroup(configuration: ServiceGroupConfiguration(
    services: [SessionManagerService(manager: manager, gracePeriod: options.gracePeriod), fetcher],
    gracefulShutdownSignals: [.sigterm, .sigint],
    logger: logger))

logger.info("starting", metadata: ["urls": "\(options.urls.count)", "interval": "\(options.interval)"])
do {
    try await group.run()
} catch {
    logger.error("service group failed", metadata: ["error": "\(error)"])
    exit(1)
}
logger.info("stopped", metadata: ["tasks-left": "\(manager.tasks.count)", "fetches": "\(fetcher.fetchCount)"])
// What a Prometheus scrape would have got: a service would serve this on /metrics instead.
print(Observability.metricsText(), terminator: "")
