// Generated from docs/reachability.md by scripts/extract-snippets.py: do not edit.
// Change the document's code block, then run `make snippets`.

import Dispatch
import UVNetworking
import Foundation

// docs/reachability.md, swift block 3
func pauseWhileOffline(_ reachability: NetworkReachabilityManager) async {
    reachability.startMonitoring()
    for await status in reachability.statusChanges {
        switch status {
        case .reachable: print("back: retry what failed")
        case .notReachable: print("offline: pause the background sync")
        case .unknown: break
        }
    }
}

// docs/reachability.md, swift block 1
func docs_reachability_1() {
    let reachability = NetworkReachabilityManager.shared
    reachability.statusChangeQueue = DispatchQueue(label: "reachability")   // nil: the main queue
    reachability.setReachabilityStatusChangeHandler { status in
        print("network:", status.localizedDescription)     // "Reachable via WiFi", "Not Reachable", ...
    }
    reachability.startMonitoring()
    // ... later
    reachability.stopMonitoring()                          // closes the netlink socket; status is .unknown
    _ = reachability
}

// docs/reachability.md, swift block 2
func docs_reachability_2() {
    let reachability = NetworkReachabilityManager(domain: "api.example.com")
    let observer = NotificationCenter.default.addObserver(forName: .networkingReachabilityDidChange,
                                                          object: reachability, queue: nil) { notification in
        let status = notification.userInfo?[NetworkingReachabilityNotificationKey.status] as? NetworkReachabilityStatus
        print(status?.localizedDescription ?? "?")
    }
    reachability.startMonitoring()
    _ = reachability
    _ = observer
}

// docs/reachability.md, swift block 4
func docs_reachability_4() {
    let manager = SessionManager()
    manager.reachabilityManager = NetworkReachabilityManager(loop: manager.loop, workers: manager.workers)
    manager.reachabilityManager?.startMonitoring()
    _ = manager
}
