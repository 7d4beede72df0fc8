import Foundation
import ServiceLifecycle
import UVNetworking

/// Starts `count` requests, says "ready", and returns at graceful shutdown without waiting for
/// them: what is left in flight is the session service's to drain.
struct RequestsInFlight: Service {
    let manager: SessionManager
    let url: URL
    let count: Int
    let outcomes: Outcomes

    func run() async {
        manager.responseSerializer = HTTPResponseSerializer()
        for _ in 0..<count {
            manager.dataTask(with: Request(url: url), completionHandler: { [outcomes] response, _, error in
                outcomes.record(status: response.map { Int($0.status.code) }, error: error)
            }).resume()
        }
        say("ready")
        try? await gracefulShutdown()
    }
}

/// How the requests ended; every completion handler call counted.
final class Outcomes: @unchecked Sendable {
    private let lock = NSLock()
    private var completed = 0, cancelled = 0, other = 0, calls = 0

    func record(status: Int?, error: (any Error)?) {
        lock.lock(); defer { lock.unlock() }
        calls += 1
        if error == nil, status == 200 {
            completed += 1
        } else if (error as? NetworkingError)?.code == .cancelled {
            cancelled += 1
        } else {
            other += 1
        }
    }

    var counts: (completed: Int, cancelled: Int, other: Int, calls: Int) {
        lock.lock(); defer { lock.unlock() }
        return (completed, cancelled, other, calls)
    }
}
