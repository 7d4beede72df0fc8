// Generated from Sources/UVNetworking/UVNetworking.docc/UVNetworking.md by scripts/extract-snippets.py: do not edit.
// Change the document's code block, then run `make snippets`.

import Foundation
import UVNetworking

// Sources/UVNetworking/UVNetworking.docc/UVNetworking.md, swift block 1
func uvnetworking_1() async throws {
    let api = HTTPSessionManager(baseURL: URL(string: "http://127.0.0.1:8080/"))
    let response = try await api.get("get", parameters: ["q": "swift"])
    print(response.statusCode, response.value ?? "no body")
    _ = api
    _ = response
}
