import Foundation
import Glibc
import ServiceLifecycle
import ServiceLifecycleTestKit
import Synchronization
import Testing
import UVNetworking
@testable import UVNetworkingServiceLifecycle

/// The swift-service-lifecycle adapter: in a service group stopped by SIGTERM in a child
/// process (the probe; ExampleServiceTests runs the example service), and in this process with
/// a test trigger.
@Suite(.tags(.childProcess)) struct SessionManagerServiceTests {
    /// Runs the probe's `scenario`, sends SIGTERM once its requests are in flight, and returns
    /// its exit status and output.
    private func runProbe(_ scenario: String) throws -> (status: Int32?, output: String) {
        let probe = try ChildProcess("uvnetworking-service-probe", arguments: [scenario])
        let ready = probe.waitForOutput("ready", timeout: 30)
        #expect(ready, "the probe never got its requests in flight: \(probe.text)")
        probe.send(SIGTERM)
        // Prompt: the drain takes the server's 0.5 s or the 0.3 s grace period.
        let status = probe.waitForExit(timeout: 15)
        return (status, probe.text)
    }

    @Test func sigtermDrainsRequestsInFlightAndTheProcessExitsZero() throws {
        let (status, output) = try runProbe("drain")
        #expect(status == 0, "\(output)")
        #expect(output.contains("completed=4 cancelled=0 other=0 calls=4 connections=0"), "\(output)")
    }

    @Test func sigtermPastTheGracePeriodCancelsWhatIsLeftAndExitsZero() throws {
        let (status, output) = try runProbe("deadline")
        #expect(status == 0, "\(output)")
        #expect(output.contains("completed=0 cancelled=4 other=0 calls=4 connections=0"), "\(output)")
    }

    /// Set by a task, read by the test.
    private final class Flag: Sendable {
        private let value = Atomic(false)
        func raise() { value.store(true, ordering: .releasing) }
        var isRaised: Bool { value.load(ordering: .acquiring) }
    }

    @Test func gracefulShutdownDrainsTheSessionInProcess() async throws {
        let manager = SessionManager()
        let returned = Flag()
        try await testGracefulShutdown { trigger in
            // An unstructured task inherits the trigger's task-local shutdown manager.
            let service = Task {
                await SessionManagerService(manager: manager, gracePeriod: .seconds(5)).run()
                returned.raise()
            }
            try await Task.sleep(for: .milliseconds(50))
            #expect(!returned.isRaised)
            trigger.triggerGracefulShutdown()
            await service.value
        }
        #expect(returned.isRaised)
        await expectInvalidated(manager)
    }

    /// A task on `manager` is refused: the session was shut down.
    private func expectInvalidated(_ manager: SessionManager, sourceLocation: SourceLocation = #_sourceLocation) async {
        do {
            _ = try await manager.data(for: Request(url: URL(string: "http://127.0.0.1:1/")!))
            Issue.record("a task ran after the service ended", sourceLocation: sourceLocation)
        } catch {
            #expect((error as? NetworkingError)?.code == .sessionInvalidated, sourceLocation: sourceLocation)
        }
    }

    @Test func cancellationShutsTheSessionDown() async throws {
        let manager = SessionManager()
        let service = Task { await SessionManagerService(manager: manager, gracePeriod: .seconds(60)).run() }
        try await Task.sleep(for: .milliseconds(50))
        service.cancel()
        await service.value
        await expectInvalidated(manager)
    }
}
