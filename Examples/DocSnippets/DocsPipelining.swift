// Generated from docs/pipelining.md by scripts/extract-snippets.py: do not edit.
// Change the document's code block, then run `make snippets`.

import Foundation
import UVNetworking

// docs/pipelining.md, swift block 1
func docs_pipelining_1() {
    var configuration = SessionConfiguration()
    configuration.maximumConnectionsPerHost = 4
    configuration.pipelineDepth = 8  // the answered request and up to 7 behind it
    let manager = HTTPSessionManager(baseURL: URL(string: "http://127.0.0.1:8080/"), configuration: configuration)
    manager.requestSerializer.httpShouldUsePipelining = true
    _ = configuration
    _ = manager
}
