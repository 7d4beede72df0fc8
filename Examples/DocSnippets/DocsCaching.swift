// Generated from docs/caching.md by scripts/extract-snippets.py: do not edit.
// Change the document's code block, then run `make snippets`.

import Foundation
import UVNetworking

// docs/caching.md, swift block 1
func docs_caching_1() throws {
    var configuration = SessionConfiguration()
    configuration.cache = try HTTPCache(memoryCapacity: 16 << 20, diskCapacity: 512 << 20,
                                        directory: URL(fileURLWithPath: "/var/cache/myservice/http"))
    let manager = SessionManager(configuration: configuration)
    _ = configuration
    _ = manager
}
