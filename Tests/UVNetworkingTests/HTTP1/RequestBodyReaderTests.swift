import Dispatch
import Foundation
import Synchronization
import Testing
@testable import UVNetworking

/// The worker-side reads of a streamed body and their framing, without sockets.
@Suite(.tags(.loopback)) struct RequestBodyReaderTests {
    /// What one chunk was, in a comparable form.
    struct Piece: Equatable {
        var bytes: [UInt8]
        var bodyCount: Int
        var isLast: Bool
        var excess: Bool
    }

    /// Reads `body` chunk after chunk on the shared loop until the last chunk or a failure.
    private func readAll(_ body: StreamedBody) -> (pieces: [Piece], error: NetworkingError?) {
        let result = Mutex<(pieces: [Piece], error: NetworkingError?)>(([], nil))
        let done = DispatchSemaphore(value: 0)
        let loop = EventLoop.shared
        loop.execute {
            let reader = RequestBodyReader(body: body, loop: loop, workers: .shared)
            reader.onChunk = { chunk in
                switch chunk {
                case .data(let bytes, let bodyCount, let isLast, let excess):
                    result.withLock { $0.pieces.append(Piece(bytes: bytes, bodyCount: bodyCount, isLast: isLast, excess: excess != nil)) }
                    if isLast {
                        reader.cancel()
                        done.signal()
                    } else {
                        reader.readNext()
                    }
                case .failed(let error):
                    result.withLock { $0.error = NetworkingError(error) }
                    reader.cancel()
                    done.signal()
                }
            }
            reader.readNext()
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        return result.withLock { $0 }
    }

    private func chunked(_ body: [UInt8]) -> [UInt8] {
        var wire: [UInt8] = []
        var start = 0
        while start < body.count {
            let end = min(start + RequestBodyReader.chunkSize, body.count)
            wire += Array(String(end - start, radix: 16).utf8) + [13, 10] + body[start..<end] + [13, 10]
            start = end
        }
        return wire + Array("0\r\n\r\n".utf8)
    }

    @Test func knownLengthComesInFullChunksAndNothingIsAdded() {
        let log = GeneratedBodyLog()
        let (pieces, error) = readAll(GeneratedBody.body(.init(produce: 150_000), declaredLength: 150_000, log: log))
        #expect(error == nil)
        #expect(pieces.map(\.bodyCount) == [65_536, 65_536, 18_928])
        #expect(pieces.map(\.isLast) == [false, false, true])
        #expect(pieces.allSatisfy { !$0.excess })
        #expect(pieces.flatMap(\.bytes) == GeneratedBody.expected(150_000))
        #expect(log.streamsMade == 1)
        #expect(log.readsOnLoop == 0)
    }

    @Test func unknownLengthIsChunkFramedAndEndsWithTheZeroChunk() {
        let (pieces, error) = readAll(GeneratedBody.body(.init(produce: 150_000), declaredLength: nil, log: GeneratedBodyLog()))
        #expect(error == nil)
        #expect(pieces.flatMap(\.bytes) == chunked(GeneratedBody.expected(150_000)))
        #expect(pieces.map(\.bodyCount).reduce(0, +) == 150_000)
        #expect(pieces.last?.isLast == true)
    }

    @Test func anEmptyChunkedBodyIsOnlyTheZeroChunk() {
        let (pieces, _) = readAll(GeneratedBody.body(.init(produce: 0), declaredLength: nil, log: GeneratedBodyLog()))
        #expect(pieces == [Piece(bytes: Array("0\r\n\r\n".utf8), bodyCount: 0, isLast: true, excess: false)])
    }

    @Test func aChunkedBodyOfWholeChunksEndsWithALoneZeroChunk() {
        let (pieces, _) = readAll(GeneratedBody.body(.init(produce: 65_536), declaredLength: nil, log: GeneratedBodyLog()))
        #expect(pieces.count == 2)
        #expect(pieces.flatMap(\.bytes) == chunked(GeneratedBody.expected(65_536)))
    }

    @Test func anEmptyBodyOfDeclaredLengthZeroIsOneEmptyLastChunk() {
        let (pieces, error) = readAll(GeneratedBody.body(.init(produce: 0), declaredLength: 0, log: GeneratedBodyLog()))
        #expect(error == nil)
        #expect(pieces == [Piece(bytes: [], bodyCount: 0, isLast: true, excess: false)])
    }

    @Test func aLongerStreamStopsAtTheDeclaredLengthAndSaysSo() {
        let (pieces, error) = readAll(GeneratedBody.body(.init(produce: 1_000), declaredLength: 500, log: GeneratedBodyLog()))
        #expect(error == nil)
        #expect(pieces.map(\.bytes) == [GeneratedBody.expected(500)])
        #expect(pieces.first?.isLast == true && pieces.first?.excess == true)
    }

    @Test func aShorterStreamFails() {
        let (pieces, error) = readAll(GeneratedBody.body(.init(produce: 100_000), declaredLength: 100_001, log: GeneratedBodyLog()))
        #expect(pieces.count == 1)
        #expect(error?.code == .bodyStreamFailed)
        #expect(error?.detail.contains("100000 of its declared 100001") == true)
    }

    @Test func aThrowingStreamFailsWithItsError() {
        let (pieces, error) = readAll(GeneratedBody.body(.init(produce: 200_000, throwAfter: 70_000), declaredLength: 200_000,
                                                         log: GeneratedBodyLog()))
        #expect(pieces.count == 1)
        #expect(error?.code == .bodyStreamFailed)
        #expect(error?.underlyingError is TestStreamError)
    }

    @Test func aThrowingFactoryFailsWithItsError() {
        let (pieces, error) = readAll(StreamedBody(length: nil) { () throws -> any RequestBodyStream in throw TestStreamError() })
        #expect(pieces.isEmpty)
        #expect(error?.underlyingError is TestStreamError)
    }

    private final class Probe: Sendable { let releasedOnLoop = Mutex<Bool?>(nil); let chunks = Mutex(0) }

    /// A stream that notes where it was released.
    private final class ReleaseProbe: RequestBodyStream {
        let probe: Probe
        init(_ probe: Probe) { self.probe = probe }
        func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int { buffer.count }
        deinit { let onLoop = EventLoop.shared.inLoop; probe.releasedOnLoop.withLock { $0 = onLoop } }
    }

    @Test func cancelStopsReadingAndReleasesTheStreamOnAWorker() {
        let probe = Probe()
        let loop = EventLoop.shared
        let body = StreamedBody(length: nil) { ReleaseProbe(probe) }
        loop.execute {
            let reader = RequestBodyReader(body: body, loop: loop, workers: .shared)
            reader.onChunk = { _ in
                probe.chunks.withLock { $0 += 1 }
                reader.cancel()  // after the first chunk; no other read was asked for
            }
            reader.readNext()
        }
        #expect(waitUntil(timeout: 5) { probe.releasedOnLoop.withLock { $0 } != nil })
        #expect(probe.releasedOnLoop.withLock { $0 } == false)
        #expect(probe.chunks.withLock { $0 } == 1)
    }
}
