import Foundation
import HTTPTypes
import Testing
@testable import UVNetworking

@Suite(.tags(.loopback)) struct SessionHooksTests {
    @Test func storedOnlyHooksDoNotActivateTheLoopPath() {
        let manager = SessionManager()
        defer { manager.invalidateSessionCancelingTasks(true, resetSession: false) }
        #expect(!manager.hooks.isActive)
        manager.taskWillPerformHTTPRedirection = { _, _, request in request }
        manager.authenticationChallengeHandler = { _, _ in .performDefaultHandling }
        #expect(manager.taskWillPerformHTTPRedirection != nil)
        #expect(manager.authenticationChallengeHandler != nil)
        // Neither is consulted yet (issues #4 and #5), so neither makes tasks take the hooked path.
        #expect(!manager.hooks.isActive)
        #expect(manager.hooks.activeSnapshot() == nil)
    }

    @Test func eachHookSetsItsKindAndClearingRestoresTheFastPath() {
        let manager = SessionManager()
        defer { manager.invalidateSessionCancelingTasks(true, resetSession: false) }
        manager.dataTaskDidReceiveData = { _, _ in }
        #expect(manager.hooks.contains(.receiveData))
        #expect(!manager.hooks.contains([.receiveResponse, .sendBodyData]))
        manager.taskDidSendBodyData = { _, _, _, _ in }
        #expect(manager.hooks.contains(.sendBodyData))
        manager.postsTaskNotifications = true
        #expect(manager.hooks.contains(.notifications))
        #expect(manager.hooks.activeSnapshot()?.postsNotifications == true)
        manager.dataTaskDidReceiveData = nil
        manager.taskDidSendBodyData = nil
        manager.postsTaskNotifications = false
        #expect(!manager.hooks.isActive)
    }

    @Test func challengeTypesCarryTheirValues() {
        let space = ProtectionSpace(host: "example.com", port: 443, scheme: "https", authenticationMethod: .serverTrust)
        let challenge = AuthenticationChallenge(protectionSpace: space, previousFailureCount: 1,
                                                proposedCredential: .user("u", password: "p"))
        #expect(challenge.protectionSpace.authenticationMethod == .serverTrust)
        #expect(challenge.proposedCredential?.user == "u")
        #expect(challenge.proposedCredential?.password == "p")
        #expect(challenge.previousFailureCount == 1)
    }
}
