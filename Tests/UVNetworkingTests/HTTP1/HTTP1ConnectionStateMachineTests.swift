import Testing
@testable import UVNetworking

/// Keep-alive decisions of one connection, without sockets.
@Suite(.tags(.unit)) struct HTTP1ConnectionStateMachineTests {
    @Test func keepAliveExchangeReturnsToIdle() {
        var machine = HTTP1ConnectionStateMachine()
        #expect(machine.connected() == .connectionReady)
        #expect(machine.execute() == .sendRequest)
        #expect(!machine.isReused)
        #expect(machine.requestWritten() == .none)
        #expect(machine.responseEnded(keepAlive: true) == .exchangeFinished(reusable: true))
        #expect(machine.state == .idle)
        #expect(machine.execute() == .sendRequest)
        #expect(machine.isReused)
    }

    @Test func connectionCloseFromTheServerEndsTheConnection() {
        var machine = HTTP1ConnectionStateMachine()
        _ = machine.connected(); _ = machine.execute(); _ = machine.requestWritten()
        #expect(machine.responseEnded(keepAlive: false) == .exchangeFinished(reusable: false))
        #expect(machine.state == .closed)
    }

    @Test func aResponseBeforeTheRequestIsWrittenFinishesAtOnceAndIsNotReused() {
        // A one-shot write still pending (a server that answers a body it never reads): the
        // response is complete, so the exchange ends now; closing abandons the write.
        var machine = HTTP1ConnectionStateMachine()
        _ = machine.connected(); _ = machine.execute()
        #expect(machine.responseEnded(keepAlive: true) == .exchangeFinished(reusable: false))
        #expect(machine.state == .closed)
        #expect(machine.requestWritten() == .none)
    }

    @Test func failuresCloseAndFailOnlyAnActiveExchange() {
        var idle = HTTP1ConnectionStateMachine()
        _ = idle.connected()
        #expect(idle.failed() == .close)
        #expect(idle.failed() == .none)

        var active = HTTP1ConnectionStateMachine()
        _ = active.connected(); _ = active.execute()
        #expect(active.failed() == .failExchange)
        #expect(active.requestWritten() == .none)

        var connecting = HTTP1ConnectionStateMachine()
        #expect(connecting.failed() == .close)
    }

    @Test func closeRequestIsIdempotent() {
        var machine = HTTP1ConnectionStateMachine()
        _ = machine.connected()
        #expect(machine.closeRequested() == .close)
        #expect(machine.closeRequested() == .none)
        #expect(machine.connected() == .none)
    }

    // MARK: Streamed request bodies

    /// A connected machine running a streamed exchange.
    private func streaming() -> HTTP1ConnectionStateMachine {
        var machine = HTTP1ConnectionStateMachine()
        _ = machine.connected()
        #expect(machine.execute(streamingBody: true) == .sendHeadAndReadBody)
        return machine
    }

    @Test func streamedBodyChunksFollowTheHeadAndTheExchangeIsReused() {
        var machine = streaming()
        #expect(machine.bodyWriteFinished() == .none)  // head written, first chunk still being read
        #expect(machine.bodyChunkRead(isLast: false) == .writeBodyChunk(readNext: true))
        #expect(machine.bodyChunkRead(isLast: true) == .none)  // waits for the write in flight
        #expect(machine.holdsReadyChunk)
        #expect(machine.bodyWriteFinished() == .writeBodyChunk(readNext: false))
        #expect(!machine.holdsReadyChunk)
        #expect(machine.bodyWriteFinished() == .bodyComplete)
        #expect(machine.requestWritten() == .none)
        #expect(machine.body == nil)
        #expect(machine.responseEnded(keepAlive: true) == .exchangeFinished(reusable: true))
        #expect(machine.state == .idle)
        #expect(machine.execute() == .sendRequest)
        #expect(machine.body == nil)
    }

    @Test func aChunkReadBeforeTheHeadIsWrittenWaitsForIt() {
        var machine = streaming()
        #expect(machine.bodyChunkRead(isLast: true) == .none)
        #expect(machine.bodyWriteFinished() == .writeBodyChunk(readNext: false))
        #expect(machine.bodyWriteFinished() == .bodyComplete)
    }

    /// Whatever order reads and writes finish in, at most one read runs, at most two chunks exist
    /// (one being written, one read ahead) and every chunk is written once, in order.
    @Test func memoryStaysBoundedInEveryOrder() {
        for seed in UInt64(1)...200 {
            var random = seed
            func coin() -> Bool {
                random = random &* 6364136223846793005 &+ 1442695040888963407
                return (random >> 33) & 1 == 1
            }
            let chunkCount = 1 + Int(seed % 7)
            var machine = streaming()
            var readsStarted = 1, chunksRead = 0, chunksWritten = 0
            var reading = true, writing = true, ready = false, writingChunk = false
            var finished = false
            func apply(_ action: HTTP1ConnectionStateMachine.Action) {
                switch action {
                case .writeBodyChunk(let readNext):
                    #expect(!writing)
                    writing = true; writingChunk = true; ready = false
                    if readNext { #expect(!reading); reading = true; readsStarted += 1 }
                case .bodyComplete:
                    finished = true
                case .none:
                    break
                default:
                    Issue.record("unexpected \(action)")
                }
            }
            var steps = 0
            while !finished && steps < 100 {
                steps += 1
                if reading && (!writing || coin()) {
                    reading = false
                    chunksRead += 1
                    ready = true
                    apply(machine.bodyChunkRead(isLast: chunksRead == chunkCount))
                } else if writing {
                    writing = false
                    if writingChunk { chunksWritten += 1; writingChunk = false }
                    apply(machine.bodyWriteFinished())
                }
                let inMemory = (writingChunk ? 1 : 0) + (ready && machine.holdsReadyChunk ? 1 : 0) + (reading ? 1 : 0)
                #expect(inMemory <= 2, "seed \(seed)")
            }
            #expect(finished, "seed \(seed)")
            #expect(readsStarted == chunkCount && chunksWritten == chunkCount, "seed \(seed)")
        }
    }

    @Test func aStreamLongerThanDeclaredFailsOnceTheDeclaredBytesAreWritten() {
        var machine = streaming()
        _ = machine.bodyWriteFinished()
        #expect(machine.bodyChunkRead(isLast: true, excess: true) == .writeBodyChunk(readNext: false))
        #expect(machine.bodyWriteFinished() == .failExchange)
        #expect(machine.state == .closed)
        #expect(machine.body == nil)
    }

    @Test func aFailedReadFailsTheExchangeAndLaterChunksAreIgnored() {
        var machine = streaming()
        #expect(machine.bodyReadFailed() == .failExchange)
        #expect(machine.state == .closed)
        #expect(machine.bodyChunkRead(isLast: false) == .none)
        #expect(machine.bodyWriteFinished() == .none)
    }

    @Test func anEarlyResponseStopsTheBodyAtOnceWhenNothingIsBeingWritten() {
        var machine = streaming()
        _ = machine.bodyWriteFinished()  // the head; a read runs
        #expect(machine.responseEnded(keepAlive: true) == .exchangeFinished(reusable: false))
        #expect(machine.state == .closed)
        #expect(machine.bodyChunkRead(isLast: false) == .none)
        #expect(machine.bodyReadFailed() == .none)
    }

    @Test func anEarlyResponseEndsTheExchangeWithoutWaitingForTheWriteInFlight() {
        // The server may never read the chunk being written: waiting for it would wait for a timeout.
        var machine = streaming()
        _ = machine.bodyWriteFinished()
        #expect(machine.bodyChunkRead(isLast: false) == .writeBodyChunk(readNext: true))
        #expect(machine.responseEnded(keepAlive: true) == .exchangeFinished(reusable: false))
        #expect(machine.state == .closed)
        // The read that was running, and the write, come back to nothing.
        #expect(machine.bodyChunkRead(isLast: false) == .none)
        #expect(!machine.holdsReadyChunk)
        #expect(machine.bodyWriteFinished() == .none)
        #expect(machine.requestWritten() == .none)
    }

    @Test func closingDuringTheBodyStopsIt() {
        var machine = streaming()
        #expect(machine.closeRequested() == .close)
        #expect(machine.body == nil)
        #expect(machine.bodyChunkRead(isLast: false) == .none)
        #expect(machine.bodyWriteFinished() == .none)
        #expect(machine.bodyReadFailed() == .none)
    }

    @Test func aSocketFailureDuringTheBodyFailsTheExchange() {
        var machine = streaming()
        _ = machine.bodyWriteFinished()
        #expect(machine.failed() == .failExchange)
        #expect(machine.body == nil)
        #expect(machine.bodyChunkRead(isLast: true) == .none)
    }

    @Test func aFailedBodyWriteLeavesTheDecisionToTheReadSide() {
        var response = streaming()
        _ = response.bodyWriteFinished()
        _ = response.bodyChunkRead(isLast: false)
        #expect(response.bodyWriteFailed() == .none)
        #expect(response.bodyChunkRead(isLast: false) == .none)  // nothing more is written
        #expect(response.responseEnded(keepAlive: true) == .exchangeFinished(reusable: false))

        var eof = streaming()
        _ = eof.bodyWriteFinished()
        _ = eof.bodyChunkRead(isLast: false)
        _ = eof.bodyWriteFailed()
        #expect(eof.failed() == .failExchange)
    }

    // MARK: Expect: 100-continue

    /// A connected machine running an exchange whose body waits for 100 Continue.
    private func expectingContinue() -> HTTP1ConnectionStateMachine {
        var machine = HTTP1ConnectionStateMachine()
        _ = machine.connected()
        #expect(machine.execute(streamingBody: true, expectsContinue: true) == .sendHeadAwaitingContinue)
        #expect(machine.isAwaitingContinue)
        return machine
    }

    @Test func theBodyWaitsForContinueThenFlowsAndTheConnectionIsReused() {
        var machine = expectingContinue()
        // The head is written; no read was started, so nothing happens until the server speaks.
        #expect(machine.bodyWriteFinished() == .none)
        #expect(machine.bodyChunkRead(isLast: false) == .none)  // no read runs: a stray result is ignored
        #expect(machine.continueToBody() == .readFirstBodyChunk)
        #expect(!machine.isAwaitingContinue)
        #expect(machine.continueToBody() == .none)  // a second 100, or the timer racing the 100
        #expect(machine.bodyChunkRead(isLast: true) == .writeBodyChunk(readNext: false))
        #expect(machine.bodyWriteFinished() == .bodyComplete)
        #expect(machine.requestWritten() == .none)
        #expect(machine.responseEnded(keepAlive: true) == .exchangeFinished(reusable: true))
        #expect(machine.state == .idle)
    }

    @Test func aContinueBeforeTheHeadIsWrittenReadsWhileTheHeadIsWritten() {
        var machine = expectingContinue()
        #expect(machine.continueToBody() == .readFirstBodyChunk)
        #expect(machine.bodyChunkRead(isLast: true) == .none)  // waits for the head's write
        #expect(machine.holdsReadyChunk)
        #expect(machine.bodyWriteFinished() == .writeBodyChunk(readNext: false))
        #expect(machine.bodyWriteFinished() == .bodyComplete)
    }

    @Test func aFinalResponseInsteadOfContinueEndsTheExchangeWithoutTheBody() {
        var machine = expectingContinue()
        _ = machine.bodyWriteFinished()
        #expect(machine.finalHeadReceived() == .none)
        #expect(!machine.isAwaitingContinue)
        // The continue timer firing now must not start the body.
        #expect(machine.continueToBody() == .none)
        #expect(machine.responseEnded(keepAlive: true) == .exchangeFinished(reusable: false))
        #expect(machine.state == .closed)
        #expect(machine.body == nil)
    }

    @Test func aFinalResponseWhileTheHeadIsStillBeingWrittenEndsAtOnce() {
        var machine = expectingContinue()
        _ = machine.finalHeadReceived()
        // The head's write finishing before the response ends changes nothing.
        #expect(machine.bodyWriteFinished() == .none)
        #expect(machine.state == .active(requestWritten: false, responseEnded: false, keepAlive: true))
        #expect(machine.responseEnded(keepAlive: true) == .exchangeFinished(reusable: false))
        #expect(machine.state == .closed)
    }

    @Test func aResponseThatEndsWhileWaitingNeverStartsTheBody() {
        // The shell always reports the head first; even without it, the end abandons the body.
        var machine = expectingContinue()
        _ = machine.bodyWriteFinished()
        #expect(machine.responseEnded(keepAlive: true) == .exchangeFinished(reusable: false))
        #expect(machine.continueToBody() == .none)
    }

    @Test func aFinalHeadAfterTheBodyStartedIsAnOrdinaryEarlyResponse() {
        var machine = expectingContinue()
        _ = machine.bodyWriteFinished()
        _ = machine.continueToBody()
        #expect(machine.finalHeadReceived() == .none)
        #expect(machine.bodyChunkRead(isLast: false) == .writeBodyChunk(readNext: true))  // still flowing
        #expect(machine.responseEnded(keepAlive: true) == .exchangeFinished(reusable: false))
        #expect(machine.bodyWriteFinished() == .none)
    }

    @Test func expectIsIgnoredWithoutAStreamedBody() {
        var machine = HTTP1ConnectionStateMachine()
        _ = machine.connected()
        #expect(machine.execute(streamingBody: false, expectsContinue: true) == .sendRequest)
        #expect(!machine.isAwaitingContinue)
        #expect(machine.continueToBody() == .none)
    }

    // MARK: The body's states, one transition at a time

    @Test func eachReadAndWriteMovesTheBodyToTheStateThatNamesIt() {
        var machine = streaming()
        #expect(machine.body == .reading(writing: true))
        _ = machine.bodyWriteFinished()
        #expect(machine.body == .reading(writing: false))
        _ = machine.bodyChunkRead(isLast: false)
        #expect(machine.body == .reading(writing: true))
        _ = machine.bodyChunkRead(isLast: false, excess: true)  // excess only counts on the last chunk
        #expect(machine.body == .chunkReady(isLast: false, failAfterWrite: false))
        _ = machine.bodyWriteFinished()
        #expect(machine.body == .reading(writing: true))
        _ = machine.bodyChunkRead(isLast: true, excess: true)
        #expect(machine.body == .chunkReady(isLast: true, failAfterWrite: true))
        #expect(machine.bodyWriteFinished() == .writeBodyChunk(readNext: false))
        #expect(machine.body == .writingLast(failAfterWrite: true))
        #expect(machine.bodyChunkRead(isLast: false) == .none)  // no read runs
        #expect(machine.bodyWriteFinished() == .failExchange)
        #expect(machine.body == nil)
    }

    @Test func theLastChunkWrittenLeavesTheBodyWrittenUntilTheRequestIs() {
        var machine = streaming()
        _ = machine.bodyWriteFinished()
        #expect(machine.bodyChunkRead(isLast: true) == .writeBodyChunk(readNext: false))
        #expect(machine.body == .writingLast(failAfterWrite: false))
        #expect(machine.bodyWriteFinished() == .bodyComplete)
        #expect(machine.body == .written)
        // Nothing is in flight: stray reports change nothing.
        #expect(machine.bodyWriteFinished() == .none)
        #expect(machine.bodyChunkRead(isLast: true) == .none)
        #expect(machine.requestWritten() == .none)
        #expect(machine.body == nil)
    }

    @Test func aFailedWriteDropsAChunkReadAhead() {
        var machine = streaming()
        _ = machine.bodyChunkRead(isLast: false)
        #expect(machine.holdsReadyChunk)
        #expect(machine.bodyWriteFailed() == .none)
        #expect(machine.body == .abandoned)
        #expect(!machine.holdsReadyChunk)
        #expect(machine.bodyWriteFinished() == .none)
        #expect(machine.bodyReadFailed() == .none)
    }

    @Test func theHeadsWriteFinishingWhileWaitingForContinueKeepsWaiting() {
        var machine = expectingContinue()
        #expect(machine.body == .awaitingContinue(headInFlight: true))
        _ = machine.bodyWriteFinished()
        #expect(machine.body == .awaitingContinue(headInFlight: false))
        #expect(machine.continueToBody() == .readFirstBodyChunk)
        // The head is written: the first chunk read goes out at once.
        #expect(machine.body == .reading(writing: false))
        #expect(machine.bodyChunkRead(isLast: false) == .writeBodyChunk(readNext: true))
    }

    @Test func aWriteThatFailsWhileWaitingForContinueNeverStartsTheBody() {
        // The head's write failed (the server closed): a 100, or the wait's timer, must not start
        // reading a body that can no longer be sent.
        var machine = expectingContinue()
        #expect(machine.bodyWriteFailed() == .none)
        #expect(!machine.isAwaitingContinue)
        #expect(machine.continueToBody() == .none)
        #expect(machine.finalHeadReceived() == .none)
        #expect(machine.responseEnded(keepAlive: true) == .exchangeFinished(reusable: false))
    }
}
