import Foundation
import Testing
@testable import UVNetworking

/// The runner's timer decisions, without a loop: which timeout has passed, and when to look again.
@Suite(.tags(.unit)) struct TaskTimeoutsTests {
    private let timeouts = TaskTimeouts(inactivity: 1000, total: .max, responseHead: .max, idle: .max)

    private func phase(_ state: TaskStateMachine.State, suspended: Bool = false, paused: Bool = false) -> TaskTimeouts.Phase {
        TaskTimeouts.Phase(state: state, isSuspended: suspended, isPausedForConsumer: paused)
    }

    @Test func inactivityCountsFromTheLastByteInEveryRunningPhase() {
        let moments = TaskTimeouts.Moments(lastActivity: 5000)
        for state in [TaskStateMachine.State.waitingForConnection, .sending, .awaitingHead, .receivingBody] {
            #expect(timeouts.expiry(at: 5999, moments, phase(state)) == nil)
            #expect(timeouts.expiry(at: 6000, moments, phase(state)) == .inactivity)
            #expect(timeouts.nextDeadline(moments, phase(state)) == 6000)
        }
    }

    @Test func aByteMovesTheDeadlineSoAnEarlyFiringOnlyReArms() {
        // Armed for 6000 after a byte at 5000; bytes kept coming until 5900.
        var moments = TaskTimeouts.Moments(lastActivity: 5000)
        #expect(timeouts.nextDeadline(moments, phase(.receivingBody)) == 6000)
        moments.lastActivity = 5900
        #expect(timeouts.expiry(at: 6000, moments, phase(.receivingBody)) == nil)
        #expect(timeouts.nextDeadline(moments, phase(.receivingBody)) == 6900)
    }

    @Test func suspensionAndConsumerPausesStopTheInactivityTimeout() {
        let moments = TaskTimeouts.Moments(lastActivity: 0)
        #expect(timeouts.expiry(at: 1_000_000, moments, phase(.receivingBody, suspended: true)) == nil)
        #expect(timeouts.expiry(at: 1_000_000, moments, phase(.waitingForConnection, suspended: true)) == nil)
        #expect(timeouts.expiry(at: 1_000_000, moments, phase(.receivingBody, paused: true)) == nil)
        #expect(timeouts.nextDeadline(moments, phase(.receivingBody, suspended: true)) == .max)
    }

    @Test func theTotalDeadlineRunsWhateverHappensAndComesFirst() {
        let total = TaskTimeouts(inactivity: 1000, total: 3000, responseHead: 500, idle: 500)
        let moments = TaskTimeouts.Moments(deadline: 3000, headDeadline: 2000, lastActivity: 2900)
        #expect(total.expiry(at: 3000, moments, phase(.receivingBody)) == .total)
        #expect(total.expiry(at: 3000, moments, phase(.awaitingHead, suspended: true)) == .total)
        #expect(total.expiry(at: 3000, moments, phase(.receivingBody, paused: true)) == .total)
        #expect(total.nextDeadline(moments, phase(.receivingBody, suspended: true, paused: true)) == 3000)
        #expect(TaskTimeouts.Expiry.total.code == .requestTimeout)
        #expect(TaskTimeouts.Expiry.inactivity.code == .requestTimeout)
    }

    @Test func theSessionsPhaseTimeoutsApplyOnlyInTheirPhase() {
        let phased = TaskTimeouts(inactivity: 10_000, total: .max, responseHead: 300, idle: 200)
        let moments = TaskTimeouts.Moments(headDeadline: 1300, lastActivity: 1000)
        #expect(phased.expiry(at: 1300, moments, phase(.awaitingHead)) == .responseHead)
        #expect(phased.expiry(at: 1300, moments, phase(.sending)) == .responseHead)
        #expect(phased.nextDeadline(moments, phase(.awaitingHead)) == 1300)
        #expect(phased.expiry(at: 1200, moments, phase(.receivingBody)) == .idle)
        #expect(phased.expiry(at: 1200, moments, phase(.receivingBody, paused: true)) == nil)
        #expect(phased.expiry(at: 5000, moments, phase(.waitingForConnection)) == nil)
        #expect(phased.nextDeadline(moments, phase(.waitingForConnection)) == 11_000)
    }

    @Test func nothingFiresBeforeResumeOrAfterTheEnd() {
        let moments = TaskTimeouts.Moments(deadline: 0, headDeadline: 0, lastActivity: 0)
        for state in [TaskStateMachine.State.idle, .completed, .failed, .cancelled] {
            #expect(timeouts.expiry(at: .max, moments, phase(state)) == nil)
            #expect(timeouts.nextDeadline(moments, phase(state)) == .max)
        }
    }

    @Test func hugeTimeoutsNeverWrapIntoThePast() {
        let huge = TaskTimeouts(inactivity: .max - 1, total: .max, responseHead: .max, idle: .max)
        let moments = TaskTimeouts.Moments(lastActivity: 10)
        #expect(huge.expiry(at: .max - 1, moments, phase(.receivingBody)) == nil)
        #expect(huge.nextDeadline(moments, phase(.receivingBody)) == .max)
    }

    @Test(arguments: [
        (1.5, 1500 as UInt64), (0.0004, 0), (1e20, .max), (.infinity, .max), (.greatestFiniteMagnitude, .max),
        (0, .max), (-1, .max), (.nan, .max), (-.infinity, .max),
    ] as [(Double, UInt64)])
    func anySecondsBecomeATimeout(seconds: Double, milliseconds: UInt64) {
        #expect(LoopDuration.timeout(seconds) == milliseconds)
    }

    @Test func clampedDurationsAndDeadlinesSaturate() {
        #expect(LoopDuration.clamped(0) == 0)
        #expect(LoopDuration.clamped(-3) == 0)
        #expect(LoopDuration.clamped(.nan) == 0)
        #expect(LoopDuration.clamped(2) == 2000)
        #expect(LoopDuration.clamped(1e20) == .max)
        #expect(LoopDuration.deadline(5, plus: 10) == 15)
        #expect(LoopDuration.deadline(5, plus: .max) == .max)
        #expect(LoopDuration.deadline(.max - 1, plus: 2) == .max)
    }

    @Test func theRequestAndTheConfigurationGiveTheTimeouts() {
        var request = Request(url: URL(string: "http://h/")!, timeoutInterval: 2)
        var configuration = SessionConfiguration()
        #expect(TaskTimeouts(request: request, settings: TaskSettings(configuration: configuration))
                == TaskTimeouts(inactivity: 2000, total: .max, responseHead: .max, idle: .max))
        request.totalTimeoutInterval = 30
        configuration.responseHeadTimeout = 4
        configuration.idleTimeout = 5
        #expect(TaskTimeouts(request: request, settings: TaskSettings(configuration: configuration))
                == TaskTimeouts(inactivity: 2000, total: 30_000, responseHead: 4000, idle: 5000))
    }
}
