import Testing
@testable import UVNetworking

/// When a finished batch waits one loop iteration before it goes to the completion queue.
@Suite(.tags(.unit)) struct FlushDeferralTests {
    /// `shouldDefer`, out of the #expect macro (which cannot call a mutating method).
    private func next(_ deferral: inout FlushDeferral, queueIdle: Bool, othersRunning: Bool, ending: Bool) -> Bool {
        deferral.shouldDefer(queueIdle: queueIdle, othersRunning: othersRunning, ending: ending)
    }

    @Test func aBatchForAnIdleQueueWaitsOneIterationWhileOthersRun() {
        var deferral = FlushDeferral()
        #expect(next(&deferral, queueIdle: true, othersRunning: true, ending: false))
        // Never twice in a row: the put-off flush goes, whatever it finds.
        #expect(!next(&deferral, queueIdle: true, othersRunning: true, ending: false))
        // Then the next batch may wait again.
        #expect(next(&deferral, queueIdle: true, othersRunning: true, ending: false))
        #expect(!next(&deferral, queueIdle: false, othersRunning: false, ending: true))
    }

    @Test func aBatchGoesAtOnceWhenWaitingGainsNothingOrTheSessionEnds() {
        var deferral = FlushDeferral()
        // A drain is scheduled or running: the post wakes nobody.
        #expect(!next(&deferral, queueIdle: false, othersRunning: true, ending: false))
        // No other task runs: nothing more will finish soon.
        #expect(!next(&deferral, queueIdle: true, othersRunning: false, ending: false))
        // Invalidation or loop shutdown: their waiters count on the batch being in the group.
        #expect(!next(&deferral, queueIdle: true, othersRunning: true, ending: true))
        #expect(!deferral.deferred)
    }
}
