// Generated from Sources/UVNetworking/UVNetworking.docc/MigratingFromAFNetworking.md by scripts/extract-snippets.py: do not edit.
// Change the document's code block, then run `make snippets`.

import Foundation
import UVNetworking

// Sources/UVNetworking/UVNetworking.docc/MigratingFromAFNetworking.md, swift block 1
func migrating_from_afnetworking_1() {
    let manager = HTTPSessionManager(baseURL: URL(string: "http://127.0.0.1:8080/"))
    manager.requestSerializer = JSONRequestSerializer()
    manager.post("post", parameters: ["name": "Ada"], headers: nil,
                 success: { task, object in print(object ?? "no body") },
                 failure: { task, error in print(error) })
    _ = manager
}
