import Foundation
import Testing
@testable import UVNetworking

/// The manager's public surface that needs no socket: targets, words, the notification's names,
/// the session's property.
@Suite(.tags(.loopback)) struct NetworkReachabilityManagerTests {
    @Test func addressesAreLiteralsOnly() {
        #expect(NetworkReachabilityManager(address: "127.0.0.1") != nil)
        #expect(NetworkReachabilityManager(address: "::1") != nil)
        #expect(NetworkReachabilityManager(address: "[2001:db8::1]") != nil)
        #expect(NetworkReachabilityManager(address: "localhost") == nil)
        #expect(NetworkReachabilityManager(address: "example.com") == nil)
        #expect(NetworkReachabilityManager(address: "") == nil)
        #expect(NetworkReachabilityManager(address: "127.0.0.1")?.target == .address(SocketAddress(numericHost: "127.0.0.1", port: 0)!))
        #expect(NetworkReachabilityManager(domain: "example.com").target == .host("example.com"))
        #expect(NetworkReachabilityManager().target == .general)
        #expect(NetworkReachabilityManager.shared.target == .general)
        #expect(NetworkReachabilityManager.shared.loop === EventLoop.shared)
    }

    @Test func unknownAndIdleBeforeMonitoring() {
        let manager = NetworkReachabilityManager(address: "127.0.0.1")!
        #expect(manager.status == .unknown)
        #expect(!manager.isReachable)
        #expect(!manager.isMonitoring)
        #expect(manager.monitoringError == nil)
        #expect(manager.localizedStatusString == "Unknown")
        #expect(manager.statusChangeQueue == nil)
        // Stopping what never started does nothing.
        manager.stopMonitoring()
        #expect(!manager.isMonitoring)
    }

    @Test func statusInWords() {
        #expect(NetworkReachabilityStatus.unknown.localizedDescription == "Unknown")
        #expect(NetworkReachabilityStatus.notReachable.localizedDescription == "Not Reachable")
        #expect(NetworkReachabilityStatus.reachable(.ethernet).localizedDescription == "Reachable via Ethernet")
        #expect(NetworkReachabilityStatus.reachable(.wifi).localizedDescription == "Reachable via WiFi")
        #expect(NetworkReachabilityStatus.reachable(.cellular).localizedDescription == "Reachable via Cellular")
        #expect(NetworkReachabilityStatus.reachable(.other).localizedDescription == "Reachable")
    }

    @Test func notificationNames() {
        #expect(Notification.Name.networkingReachabilityDidChange.rawValue == "UVNetworkingReachabilityDidChangeNotification")
        #expect(!NetworkingReachabilityNotificationKey.status.isEmpty)
    }

    @Test func sessionKeepsAnOptionalManager() {
        let session = SessionManager()
        #expect(session.reachabilityManager == nil)
        let manager = NetworkReachabilityManager()
        session.reachabilityManager = manager
        #expect(session.reachabilityManager === manager)
        #expect(!manager.isMonitoring, "the session does not start it")
        session.reachabilityManager = nil
        #expect(session.reachabilityManager == nil)
    }

    @Test func errorsSayWhy() {
        let error = NetworkReachabilityError.systemCall("socket", errno: EMFILE)
        #expect(error.reason == .socketFailed)
        #expect(error.description.contains("socket failed: EMFILE"))
        #expect(NetworkReachabilityError.loopShutDown.description.contains("shut down"))
    }
}
