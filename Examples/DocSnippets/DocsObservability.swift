// Generated from docs/observability.md by scripts/extract-snippets.py: do not edit.
// Change the document's code block, then run `make snippets`.

import Foundation
import Logging
import UVNetworking

// docs/observability.md, swift block 1
func docs_observability_1() async throws {
    let myMetricsFactory = SessionConfiguration().metricsFactory
    let requestLogger = Logger(label: "my-service.request")
    var configuration = SessionConfiguration()
    configuration.backgroundActivityLogger = Logger(label: "my-service.http-client")
    configuration.metricsFactory = myMetricsFactory  // nil: MetricsSystem.factory, if bootstrapped
    let manager = SessionManager(configuration: configuration)

    var request = Request(url: URL(string: "https://example.com/items")!)
    request.logger = requestLogger                   // this task's lines, with your request metadata
    let response = try await manager.data(for: request)   // a DataResponse: response, data, value, metrics
    _ = myMetricsFactory
    _ = requestLogger
    _ = configuration
    _ = manager
    _ = request
    _ = response
}
