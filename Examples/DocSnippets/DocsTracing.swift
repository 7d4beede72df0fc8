// Generated from docs/tracing.md by scripts/extract-snippets.py: do not edit.
// Change the document's code block, then run `make snippets`.

import Tracing
import UVNetworking
import Foundation

// docs/tracing.md, swift block 1
func docs_tracing_1() {
    let myTracer = NoOpTracer()
    InstrumentationSystem.bootstrap(myTracer)   // e.g. swift-otel's tracer
    let manager = SessionManager()
    _ = myTracer
    _ = manager
}

// docs/tracing.md, swift block 2
func docs_tracing_2() {
    let myTracer = NoOpTracer()
    var configuration = SessionConfiguration()
    configuration.tracer = myTracer
    let manager = SessionManager(configuration: configuration)
    _ = myTracer
    _ = configuration
    _ = manager
}

// docs/tracing.md, swift block 3
func docs_tracing_3() {
    let tracer = NoOpTracer()
    let manager = SessionManager()
    let request = Request(url: URL(string: "http://127.0.0.1:8080/get")!)
    let task = tracer.withSpan("refresh") { _ in manager.dataTask(with: request) { _, _, _ in } }
    task.resume()   // later, anywhere: the task's span is still the child of "refresh"
    _ = tracer
    _ = manager
    _ = request
    _ = task
}
