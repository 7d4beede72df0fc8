import Foundation
import Testing

/// Embedding the library for a service's whole life: managers dropped at any moment, loops and
/// worker pools shut down under them, a loop that cannot start. Each case runs in a child
/// process (EmbedProbe), so a crash fails its test, not the run.
@Suite(.tags(.childProcess)) struct SessionLifecycleTests {
    @Test func droppingAManagerWhoseConnectionIdlesSurvivesTheIdleTimer() throws {
        let result = try EmbedProbe.run("drop-idle")
        #expect(result.succeeded, "\(result)")
    }

    @Test func threeHundredManagersUsedOnceAndDropped() throws {
        let result = try EmbedProbe.run("drop-many")
        #expect(result.succeeded, "\(result)")
    }

    @Test func tasksOfAManagerDroppedRightAfterResumeRunToCompletion() throws {
        let result = try EmbedProbe.run("drop-after-resume")
        #expect(result.succeeded, "\(result)")
    }

    @Test func aTwoLoopManagerDroppedMidFlightCompletesItsTasksClosesItsConnectionsAndExits() throws {
        let result = try EmbedProbe.run("drop-group-mid-flight")
        #expect(result.succeeded, "\(result)")
    }

    @Test func managerChurnLeavesTheDescriptorCountAtItsBaseline() throws {
        let result = try EmbedProbe.run("churn")
        #expect(result.succeeded, "\(result)")
    }

    @Test func droppingAManagerWhoseConnectionIsStillConnectingSurvivesTheConnectTimeout() throws {
        let result = try EmbedProbe.run("drop-while-connecting")
        #expect(result.succeeded, "\(result)")
    }

    @Test func aDownloadInFlightWhenTheLoopShutsDownFailsAndLeavesNoFile() throws {
        let result = try EmbedProbe.run("shutdown-loop-mid-download")
        #expect(result.succeeded, "\(result)")
    }

    @Test func aResumeRacingTheLoopShutdownCompletesTheTaskOnce() throws {
        let result = try EmbedProbe.run("resume-races-loop-shutdown")
        #expect(result.succeeded, "\(result)")
    }

    @Test func theAsyncAPIOnAShutDownLoopThrowsLoopShutDown() throws {
        let result = try EmbedProbe.run("async-after-loop-shutdown")
        #expect(result.succeeded, "\(result)")
    }

    @Test func aTaskResumedOnAShutDownLoopFailsWithLoopShutDown() throws {
        let result = try EmbedProbe.run("resume-after-loop-shutdown")
        #expect(result.succeeded, "\(result)")
    }

    @Test func shuttingDownTheLoopUnderATaskEndsItWithLoopShutDown() throws {
        let result = try EmbedProbe.run("shutdown-loop-mid-task")
        #expect(result.succeeded, "\(result)")
    }

    @Test func aShutDownWorkerPoolRefusesJobsAndItsSessionsTasksFail() throws {
        let result = try EmbedProbe.run("submit-after-pool-shutdown")
        #expect(result.succeeded, "\(result)")
    }

    @Test func aLoopThatCannotStartThrows() throws {
        let result = try EmbedProbe.run("loop-init-low-nofile")
        #expect(result.succeeded, "\(result)")
    }

    /// A loop whose thread cannot be made (a thread limit reached) throws instead of waiting
    /// for that thread forever.
    @Test(.enabled(if: getuid() == 0, "needs root to run the probe as a user a thread limit binds"))
    func aLoopWhoseThreadCannotStartThrows() throws {
        let result = try EmbedProbe.run("loop-thread-refused", timeout: 30)
        #expect(result.succeeded, "\(result)")
    }
}
