// Generated from Sources/UVNetworking/UVNetworking.docc/MigratingFromAFNetworking.md by scripts/extract-snippets.py: do not edit.
// Change the document's code block, then run `make snippets`.

import Foundation
import UVNetworking
import Dispatch

// Sources/UVNetworking/UVNetworking.docc/MigratingFromAFNetworking.md, swift block 3
func retryWhenTheNetworkReturns(_ reachability: NetworkReachabilityManager, retry: () async -> Void) async {
    reachability.startMonitoring()
    for await status in reachability.statusChanges {
        if case .reachable = status { await retry() }
    }
}

// Sources/UVNetworking/UVNetworking.docc/MigratingFromAFNetworking.md, swift block 1
func migrating_from_afnetworking_1() {
    let manager = HTTPSessionManager(baseURL: URL(string: "http://127.0.0.1:8080/"))
    manager.requestSerializer = JSONRequestSerializer()
    manager.post("post", parameters: ["name": "Ada"], headers: nil,
                 success: { task, object in print(object ?? "no body") },
                 failure: { task, error in print(error) })
    _ = manager
}

// Sources/UVNetworking/UVNetworking.docc/MigratingFromAFNetworking.md, swift block 2
func migrating_from_afnetworking_2() {
    let reachability = NetworkReachabilityManager.shared
    reachability.statusChangeQueue = DispatchQueue(label: "reachability")   // nil: the main queue
    reachability.setReachabilityStatusChangeHandler { status in
        print(status.localizedDescription)                  // a hint: never hold requests back on it
    }
    reachability.startMonitoring()
    _ = reachability
}
