import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import Tracing
import UVNetworking

/// Fetches each URL in turn, waits `interval`, and again, until the service group shuts down:
/// then it finishes the round in flight and returns. Each round is a span, so the client spans
/// of its fetches are its children, in one trace.
final class PeriodicFetcher: Service, Sendable {
    private let manager: SessionManager
    private let urls: [URL]
    private let interval: Duration
    private let logger: Logger
    private let fetches = Atomic(0)

    init(manager: SessionManager, urls: [URL], interval: Duration, logger: Logger) {
        self.manager = manager
        self.urls = urls
        self.interval = interval
        self.logger = logger
    }

    /// Requests made so far, whatever their outcome.
    var fetchCount: Int { fetches.load(ordering: .relaxed) }

    func run() async {
        var round = 0
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            round += 1
            var logger = self.logger
            logger[metadataKey: "round"] = "\(round)"
            await withSpan("fetch round") { span in
                span.attributes["example.round"] = round
                // The span is in the task-local context here: each task made in it is its child.
                for url in urls { await fetch(url, logger: logger) }
            }
            // The pause ends early at graceful shutdown.
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: self.interval) }
        }
        logger.info("fetcher stopped")
    }

    private func fetch(_ url: URL, logger: Logger) async {
        fetches.add(1, ordering: .relaxed)
        let request = Observability.request(for: url, logger: logger)
        do {
            let response = try await manager.data(for: request)
            logger.info("fetched", metadata: ["url": "\(url.withoutCredentials)", "status": "\(response.statusCode)",
                                              "bytes": "\(response.data.count)"])
        } catch {
            logger.warning("fetch failed", metadata: ["url": "\(url.withoutCredentials)", "error": "\(error)"])
        }
    }
}
