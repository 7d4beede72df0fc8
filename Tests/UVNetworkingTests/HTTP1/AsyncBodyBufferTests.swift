import Testing
@testable import UVNetworking

/// The decisions of an async body's buffer, without tasks or sockets: when the producer waits,
/// what each chunk holds and how it is framed, and how length faults show.
@Suite(.tags(.unit)) struct AsyncBodyBufferTests {
    /// A chunk in a comparable form.
    enum Piece: Equatable {
        case data([UInt8], bodyCount: Int, isLast: Bool, excess: Bool)
        case failed(String)
    }

    private func piece(_ chunk: RequestBodyReader.Chunk?) -> Piece? {
        switch chunk {
        case nil: return nil
        case .data(let bytes, let bodyCount, let isLast, let excess)?:
            return .data(bytes, bodyCount: bodyCount, isLast: isLast, excess: excess != nil)
        case .failed(let error)?:
            return .failed(NetworkingError(error).detail)
        }
    }

    private func bytes(_ count: Int, from start: Int = 0) -> [UInt8] { (0..<count).map { UInt8((start + $0) % 251) } }

    @Test func theProducerWaitsOnceTheLimitIsHeldAndGoesOnBelowIt() {
        var buffer = AsyncBodyBuffer(declared: nil, limit: 100)
        #expect(buffer.push(bytes(60)).0 == .more)
        #expect(buffer.push(bytes(60)).0 == .waitForRoom)
        #expect(!buffer.hasRoom)
        #expect(buffer.buffered == 120)
        _ = buffer.take(max: 20)
        #expect(!buffer.hasRoom, "100 held is the limit")
        _ = buffer.take(max: 1)
        #expect(buffer.hasRoom)
        #expect(buffer.maxBuffered == 120)
    }

    @Test func knownLengthChunksAreBoundedAndTheLastWaitsForTheEnd() {
        var buffer = AsyncBodyBuffer(declared: 10, limit: 1_000)
        _ = buffer.push(bytes(4))
        #expect(piece(buffer.take(max: 3)) == .data(bytes(3), bodyCount: 3, isLast: false, excess: false))
        _ = buffer.push(bytes(6, from: 4))
        // All 10 bytes are in, but whether an 11th follows is not known yet.
        #expect(piece(buffer.take(max: 64)) == nil)
        #expect(buffer.loopWaiting == 64)
        #expect(piece(buffer.finish()) == .data(bytes(7, from: 3), bodyCount: 7, isLast: true, excess: false))
        #expect(buffer.delivered)
    }

    @Test func aFullBufferHoldingTheWholeRestStillAsksForTheEnd() {
        // The last chunk waits for the end; the end is only seen by asking for one more element.
        // A producer told to wait for room then would wait for a chunk that waits for it.
        var buffer = AsyncBodyBuffer(declared: 10, limit: 4)
        #expect(buffer.push(bytes(10)).0 == .more, "the declared length is held: only the end can follow")
        #expect(piece(buffer.take(max: 64)) == nil)
        #expect(buffer.hasRoom)
        #expect(piece(buffer.finish()) == .data(bytes(10), bodyCount: 10, isLast: true, excess: false))

        var byBytes = AsyncBodyBuffer(declared: 3, limit: 1)
        #expect(byBytes.push(bytes(1)).0 == .waitForRoom)
        _ = byBytes.take(max: 64)
        #expect(byBytes.push(bytes(1, from: 1)).0 == .waitForRoom)
        _ = byBytes.take(max: 64)
        #expect(byBytes.push(bytes(1, from: 2)).0 == .more)
        #expect(piece(byBytes.take(max: 64)) == nil)
        #expect(piece(byBytes.finish()) == .data(bytes(1, from: 2), bodyCount: 1, isLast: true, excess: false))
    }

    @Test func chunkedFramingEndsWithTheZeroChunk() {
        var buffer = AsyncBodyBuffer(declared: nil, limit: 1_000)
        _ = buffer.push(bytes(20))
        #expect(piece(buffer.take(max: 16)) == .data(Array("10\r\n".utf8) + bytes(16) + Array("\r\n".utf8), bodyCount: 16, isLast: false, excess: false))
        _ = buffer.finish()
        #expect(piece(buffer.take(max: 16)) == .data(Array("4\r\n".utf8) + bytes(4, from: 16) + Array("\r\n0\r\n\r\n".utf8), bodyCount: 4,
                                                    isLast: true, excess: false))
    }

    @Test func emptyBodies() {
        var chunked = AsyncBodyBuffer(declared: nil, limit: 10)
        #expect(piece(chunked.take(max: 64)) == nil)
        #expect(piece(chunked.finish()) == .data(Array("0\r\n\r\n".utf8), bodyCount: 0, isLast: true, excess: false))
        var counted = AsyncBodyBuffer(declared: 0, limit: 10)
        #expect(counted.push([]).0 == .more)
        #expect(piece(counted.take(max: 64)) == nil)
        #expect(piece(counted.finish()) == .data([], bodyCount: 0, isLast: true, excess: false))
    }

    @Test func aShortBodyFailsWithoutSendingItsTail() {
        var buffer = AsyncBodyBuffer(declared: 100, limit: 1_000)
        _ = buffer.push(bytes(70))
        _ = buffer.finish()
        #expect(piece(buffer.take(max: 64)) == .failed("the body stream ended after 70 of its declared 100 bytes"))
    }

    @Test func aLongBodySendsExactlyTheDeclaredBytesThenFails() {
        var buffer = AsyncBodyBuffer(declared: 100, limit: 1_000)
        #expect(buffer.push(bytes(60)).0 == .more)
        #expect(buffer.push(bytes(60, from: 60)).0 == .stop, "the producer is not asked for more past the length")
        #expect(buffer.buffered == 100)
        // Elements are joined into chunks of up to `max` bytes.
        #expect(piece(buffer.take(max: 64)) == .data(bytes(64), bodyCount: 64, isLast: false, excess: false))
        #expect(piece(buffer.take(max: 64)) == .data(bytes(36, from: 64), bodyCount: 36, isLast: true, excess: true))
    }

    @Test func aFailureReachesAWaitingConnectionAtOnce() {
        var buffer = AsyncBodyBuffer(declared: nil, limit: 1_000)
        _ = buffer.push(bytes(10))
        _ = buffer.take(max: 64)
        #expect(piece(buffer.take(max: 64)) == nil)
        #expect(piece(buffer.fail(.readFailed(bodyRead: 10, TestStreamError()))) ==
                .failed("reading the body stream failed after 10 bytes: the test stream failed on purpose"))
        #expect(buffer.push(bytes(1)).0 == .stop)
    }

    @Test func cancelDropsWhatIsHeldAndStopsTheProducer() {
        var buffer = AsyncBodyBuffer(declared: nil, limit: 10)
        _ = buffer.push(bytes(50))
        buffer.cancel()
        #expect(buffer.buffered == 0)
        #expect(buffer.hasRoom)
        #expect(buffer.push(bytes(1)).0 == .stop)
        #expect(piece(buffer.finish()) == nil)
    }

    @Test func aOneShotBodyAskedAgainSaysItCannotBeReplayed() {
        var buffer = AsyncBodyBuffer(declared: 5, limit: 10)
        #expect(piece(buffer.take(max: 64)) == nil)
        guard case .failed(let detail)? = piece(buffer.fail(.notReplayable)) else {
            Issue.record("no failure")
            return
        }
        #expect(detail.contains("cannot be replayed"))
    }
}
