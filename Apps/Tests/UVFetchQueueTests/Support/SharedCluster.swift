import Foundation
import Synchronization

/// One cluster for the whole test process, started by the first test that asks (each test
/// makes a database of its own in it), stopped at exit.
enum SharedCluster {
    private static let started = Mutex<PostgresCluster?>(nil)

    /// The cluster on 127.0.0.1.
    static func get() throws -> PostgresCluster {
        try started.withLock { started in
            if let started { return started }
            let cluster = try PostgresCluster()
            started = cluster
            atexit { SharedCluster.stopAtExit() }
            return cluster
        }
    }

    private static func stopAtExit() {
        started.withLock { $0 }?.stop()
    }
}
