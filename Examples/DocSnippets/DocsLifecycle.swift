// Generated from docs/lifecycle.md by scripts/extract-snippets.py: do not edit.
// Change the document's code block, then run `make snippets`.

import Foundation
import UVNetworking
import Logging
import ServiceLifecycle
import UVNetworkingServiceLifecycle

// docs/lifecycle.md, swift block 1
func docs_lifecycle_1() async throws {
    let url = URL(string: "http://127.0.0.1:8080/get")!
    let response = try await SessionManager.shared.data(for: Request(url: url))
    _ = url
    _ = response
}

// docs/lifecycle.md, swift block 2
func docs_lifecycle_2() async {
    let manager = SessionManager()
    await manager.shutdown(deadline: .now + .seconds(10))  // a ContinuousClock instant
    await manager.shutdown(gracePeriod: .seconds(10))      // the same, from now
    await manager.shutdown()                               // no deadline: waits for every task
    _ = manager
}

// docs/lifecycle.md, swift block 3
func docs_lifecycle_3() async {
    let manager = SessionManager()
    await manager.shutdown(gracePeriod: .seconds(10))
    let leftOpen = manager.openConnectionCount   // 0: nothing of the session is left open
    _ = manager
    _ = leftOpen
}

// docs/lifecycle.md, swift block 4
func docs_lifecycle_4() async throws {
    struct Worker: Service { func run() async throws {} }
    let myWorker = Worker()
    let logger = Logger(label: "my-service")
    let manager = SessionManager()
    let group = ServiceGroup(configuration: ServiceGroupConfiguration(
        services: [SessionManagerService(manager: manager, gracePeriod: .seconds(10)), myWorker],
        gracefulShutdownSignals: [.sigterm, .sigint],
        logger: logger))
    try await group.run()
    _ = myWorker
    _ = logger
    _ = manager
    _ = group
}
