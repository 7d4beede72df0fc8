import Dispatch
import Foundation
import Synchronization
import Testing
@_spi(Testing) @testable import UVNetworking

/// Managers against this machine's real kernel (its own network namespace, untouched): readings
/// for loopback, "localhost" and a name that cannot resolve; what each transition reaches; the
/// netlink socket closed at stop, at the manager's end and at the loop's. Serialized: they count
/// the process's descriptors.
@Suite(.tags(.childProcess), .serialized) struct ReachabilityMonitoringTests {
    /// What the observers of one manager saw, in order.
    final class Seen: Sendable {
        let events = Mutex<[String]>([])
        func add(_ event: String) { events.withLock { $0.append(event) } }
        var all: [String] { events.withLock { $0 } }
    }

    /// Waits (up to 5 s, a generous bound on a loaded machine) for a reading other than unknown.
    private func reading(of manager: NetworkReachabilityManager) -> NetworkReachabilityStatus {
        _ = waitUntil(timeout: 5) { manager.status != .unknown || !manager.isMonitoring }
        return manager.status
    }

    /// The loopback address is reachable over an interface of kind other, within the issue's
    /// second; the handler (on the queue given), the notification (after it, with the status)
    /// and a stream see the one transition, once.
    @Test func loopbackAddressIsReachableAndEveryObserverHearsOnce() async throws {
        let manager = try #require(NetworkReachabilityManager(address: "127.0.0.1"))
        let queue = DispatchQueue(label: "reachability.test.observers")
        manager.statusChangeQueue = queue
        let seen = Seen()
        manager.setReachabilityStatusChangeHandler { status in
            dispatchPrecondition(condition: .onQueue(queue))
            seen.add("handler \(status.localizedDescription)")
        }
        let observer = NotificationCenter.default.addObserver(forName: .networkingReachabilityDidChange, object: manager, queue: nil) { note in
            dispatchPrecondition(condition: .onQueue(queue))
            let status = note.userInfo?[NetworkingReachabilityNotificationKey.status] as? NetworkReachabilityStatus
            seen.add("notification \(status?.localizedDescription ?? "none")")
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        let stream = manager.statusChanges
        let started = monotonicSeconds()
        manager.startMonitoring()
        #expect(manager.isMonitoring)
        #expect(reading(of: manager) == .reachable(.other))
        let elapsed = monotonicSeconds() - started
        #expect(elapsed < 1, "first reading after \(elapsed) s")
        #expect(manager.isReachable && !manager.isReachableViaEthernet && !manager.isReachableViaWiFi && !manager.isReachableViaCellular)
        #expect(manager.localizedStatusString == "Reachable")
        // A stream taken now starts with the current status.
        let late = manager.statusChanges
        #expect(waitUntil(timeout: 5) { seen.all.count == 2 })
        manager.stopMonitoring()
        #expect(manager.status == .unknown)
        var streamed: [NetworkReachabilityStatus] = []
        for await status in stream { streamed.append(status) }
        var lateStreamed: [NetworkReachabilityStatus] = []
        for await status in late { lateStreamed.append(status) }
        #expect(seen.all == ["handler Reachable", "notification Reachable"])
        #expect(streamed == [.reachable(.other)])
        #expect(lateStreamed == [.reachable(.other)])
    }

    /// `shared` watches the default route on the shared loop: some reading (this machine's
    /// network decides which), then nothing held after stop.
    @Test func sharedGivesAReading() {
        let manager = NetworkReachabilityManager.shared
        manager.statusChangeQueue = DispatchQueue(label: "reachability.test")
        defer { manager.statusChangeQueue = nil }
        manager.startMonitoring()
        let status = reading(of: manager)
        manager.stopMonitoring()
        #expect(status != .unknown, "\(String(describing: manager.monitoringError))")
        #expect(!manager.isMonitoring && manager.status == .unknown)
    }

    @Test func localhostResolvesAndIsReachable() {
        let manager = NetworkReachabilityManager(domain: "localhost")
        manager.statusChangeQueue = DispatchQueue(label: "reachability.test")
        manager.startMonitoring()
        defer { manager.stopMonitoring() }
        #expect(reading(of: manager) == .reachable(.other))
    }

    /// RFC 6761: .invalid never resolves; the library's resolver says so without a query.
    @Test func unresolvableNameIsNotReachable() {
        let manager = NetworkReachabilityManager(domain: "name.invalid")
        manager.statusChangeQueue = DispatchQueue(label: "reachability.test")
        manager.startMonitoring()
        defer { manager.stopMonitoring() }
        #expect(reading(of: manager) == .notReachable)
        #expect(manager.isMonitoring, "still watching: the name may resolve after a change")
    }

    /// Stop closes the socket and every handle of the monitor; start again works.
    @Test func stopClosesTheSocketAndHandles() throws {
        let loop = try EventLoop(name: "reachability.stop")
        defer { loop.shutdown() }
        let descriptors = openFileDescriptorCount()
        // What is open, not how much: a descriptor an earlier test left closing on another
        // thread (a child process's pipe) would hide the monitor's socket from a count.
        let openBefore = Set(fileDescriptorTargets().values)
        let handles = loop.openHandleCountFromOutside()
        let manager = NetworkReachabilityManager(domain: "localhost", loop: loop, workers: .shared)
        manager.statusChangeQueue = DispatchQueue(label: "reachability.test")
        for round in 0..<2 {
            manager.startMonitoring()
            #expect(reading(of: manager) == .reachable(.other), "round \(round)")
            #expect(!Set(fileDescriptorTargets().values).subtracting(openBefore).isEmpty, "the monitor's socket is open")
            #expect(loop.openHandleCountFromOutside() > handles)
            manager.stopMonitoring()
            #expect(!manager.isMonitoring)
            #expect(manager.status == .unknown)
            #expect(waitUntil(timeout: 5) { openFileDescriptorCount() <= descriptors },
                    "fds: baseline \(descriptors), now \(openFileDescriptorCount()): \(fileDescriptorTargets())")
            #expect(waitUntil(timeout: 5) { loop.openHandleCountFromOutside() == handles })
        }
    }

    /// A manager let go while monitoring is freed (nothing on the loop holds it) and its socket
    /// and handles close.
    @Test func droppedManagerClosesItsSocket() throws {
        let loop = try EventLoop(name: "reachability.drop")
        defer { loop.shutdown() }
        let descriptors = openFileDescriptorCount()
        let seen = Seen()
        weak var weakManager: NetworkReachabilityManager?
        do {
            let manager = NetworkReachabilityManager(address: "127.0.0.1", loop: loop, workers: .shared)!
            manager.statusChangeQueue = DispatchQueue(label: "reachability.test")
            manager.setReachabilityStatusChangeHandler { seen.add($0.localizedDescription) }
            weakManager = manager
            manager.startMonitoring()
            #expect(reading(of: manager) == .reachable(.other))
        }
        #expect(waitUntil(timeout: 5) { weakManager == nil }, "the manager is still alive")
        #expect(waitUntil(timeout: 5) { openFileDescriptorCount() <= descriptors },
                "fds: baseline \(descriptors), now \(openFileDescriptorCount())")
        #expect(waitUntil(timeout: 5) { loop.openHandleCountFromOutside() == 0 })
        #expect(seen.all.count == 1)
    }

    /// The loop shut down under a monitoring manager: no handle left, the socket closed, the
    /// status unknown (reported once), the reason kept; a later start says the same.
    @Test func loopShutDownWhileMonitoring() async throws {
        // Before the loop: its own descriptors close with it.
        let descriptors = openFileDescriptorCount()
        let loop = try EventLoop(name: "reachability.shutdown")
        let manager = NetworkReachabilityManager(address: "127.0.0.1", loop: loop, workers: .shared)!
        manager.statusChangeQueue = DispatchQueue(label: "reachability.test")
        let seen = Seen()
        manager.setReachabilityStatusChangeHandler { seen.add($0.localizedDescription) }
        let stream = manager.statusChanges
        manager.startMonitoring()
        #expect(reading(of: manager) == .reachable(.other))
        await loop.shutdown()
        #expect(manager.status == .unknown)
        #expect(!manager.isMonitoring)
        #expect(manager.monitoringError?.reason == .loopShutDown)
        #expect(loop.openHandleCountFromOutside() == 0)
        #expect(waitUntil(timeout: 5) { openFileDescriptorCount() <= descriptors },
                "fds: baseline \(descriptors), now \(openFileDescriptorCount())")
        var streamed: [NetworkReachabilityStatus] = []
        for await status in stream { streamed.append(status) }
        #expect(streamed == [.reachable(.other), .unknown])
        #expect(waitUntil(timeout: 5) { seen.all == ["Reachable", "Unknown"] }, "\(seen.all)")
        manager.startMonitoring()
        #expect(!manager.isMonitoring)
        #expect(manager.monitoringError?.reason == .loopShutDown)
    }

    /// No queue set: the handler and then the notification run on the main queue, in a child
    /// process that serves it with dispatchMain() (this test process does not).
    @Test(.timeLimit(.minutes(1)))
    func defaultDeliveryIsOnTheMainQueue() throws {
        let result = try EmbedProbe.run("reachability-main-queue", timeout: 30)
        #expect(result.succeeded, "\(result)")
    }

    /// A stream whose consumer has gone is forgotten at once; a stream still held does not keep
    /// the manager: it ends when the manager goes away.
    @Test func streamsNeitherPileUpNorHoldTheManager() async throws {
        let manager = try #require(NetworkReachabilityManager(address: "127.0.0.1"))
        for _ in 0..<100 { _ = manager.statusChanges }
        #expect(manager.openStreamCount == 0)
        weak var weakManager: NetworkReachabilityManager?
        var held: AsyncStream<NetworkReachabilityStatus>?
        do {
            let other = try #require(NetworkReachabilityManager(address: "127.0.0.1"))
            weakManager = other
            held = other.statusChanges
            #expect(other.openStreamCount == 1)
        }
        #expect(weakManager == nil, "a stream keeps its manager alive")
        var streamed: [NetworkReachabilityStatus] = []
        for await status in held! { streamed.append(status) }
        #expect(streamed.isEmpty)
    }

    /// A handler replaced between two transitions: the old one hears the first, the new one the
    /// second, each once; removed, neither hears the third. The notification hears all three.
    @Test func handlerReplacedBetweenTransitions() throws {
        let manager = try #require(NetworkReachabilityManager(address: "127.0.0.1"))
        manager.statusChangeQueue = DispatchQueue(label: "reachability.test")
        let seen = Seen()
        let observer = NotificationCenter.default.addObserver(forName: .networkingReachabilityDidChange, object: manager, queue: nil) { _ in
            seen.add("notification")
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        for handler in ["first", "second", nil] as [String?] {
            if let handler {
                manager.setReachabilityStatusChangeHandler { seen.add("\(handler) \($0.localizedDescription)") }
            } else {
                manager.setReachabilityStatusChangeHandler(nil)
            }
            let before = seen.all.count
            manager.startMonitoring()
            #expect(reading(of: manager) == .reachable(.other))
            #expect(waitUntil(timeout: 5) { seen.all.count == before + (handler == nil ? 1 : 2) })
            manager.stopMonitoring()
        }
        manager.statusChangeQueue!.sync {}
        #expect(seen.all == ["first Reachable", "notification", "second Reachable", "notification", "notification"])
    }

    /// Start and stop from several threads at once, in any order: no crash, nothing left open,
    /// and the manager still works afterwards.
    @Test func startAndStopRaceFromSeveralThreads() throws {
        let loop = try EventLoop(name: "reachability.race")
        defer { loop.shutdown() }
        let descriptors = openFileDescriptorCount()
        let manager = NetworkReachabilityManager(address: "127.0.0.1", loop: loop, workers: .shared)!
        manager.statusChangeQueue = DispatchQueue(label: "reachability.test", attributes: .concurrent)
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            var random = SystemRandomNumberGenerator()
            for _ in 0..<200 {
                if Bool.random(using: &random) { manager.startMonitoring() } else { manager.stopMonitoring() }
                if thread == 0 { _ = manager.statusChanges }
            }
        }
        manager.stopMonitoring()
        #expect(waitUntil(timeout: 5) { openFileDescriptorCount() <= descriptors },
                "fds: baseline \(descriptors), now \(openFileDescriptorCount())")
        #expect(waitUntil(timeout: 5) { loop.openHandleCountFromOutside() == 0 })
        manager.startMonitoring()
        #expect(reading(of: manager) == .reachable(.other))
        manager.stopMonitoring()
        #expect(waitUntil(timeout: 5) { loop.openHandleCountFromOutside() == 0 })
    }
}
