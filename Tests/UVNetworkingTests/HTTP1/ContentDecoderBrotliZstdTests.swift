import Foundation
import Testing
@testable import UVNetworking
import UVHTTP1

/// The decoder's br (RFC 7932) and zstd (RFC 8878, RFC 9659) stages: whole and split input,
/// layers with the other codings, several zstd frames, cut-short and damaged streams, bombs, and
/// the 8 MiB zstd window. Fixtures come from libbrotlienc and libzstd (BrotliZstdFixtures.swift).
@Suite(.tags(.unit)) struct ContentDecoderBrotliZstdTests {
    private let limits = ContentDecoder.Limits(maximumBytes: nil, maximumRatio: 250)

    /// `body` through a fresh decoder of `codings`, in pieces ending at `cuts` (the last one the
    /// body's end), then finish().
    private func decode(_ codings: [ContentDecoder.Coding], _ body: Data, cuts: [Int]? = nil,
                        limits: ContentDecoder.Limits? = nil) throws(ContentDecoder.Failure) -> Data {
        guard let decoder = ContentDecoder(codings: codings, limits: limits ?? self.limits) else {
            throw .corrupt("the decoder did not start")
        }
        let bytes = [UInt8](body)
        var out = Data()
        var start = 0
        for cut in cuts ?? [bytes.count] {
            out.append(contentsOf: try decoder.decode(Array(bytes[start..<cut])))
            start = cut
        }
        try decoder.finish()
        return out
    }

    /// Cuts at random points (a fixed seed, so a failure repeats), ending at `count`.
    private func randomCuts(_ count: Int, pieces: Int, seed: UInt64) -> [Int] {
        var state = seed
        var cuts = Set<Int>()
        while cuts.count < min(pieces, count) {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            cuts.insert(Int(state >> 33) % count + 1)
        }
        return cuts.union([count]).sorted()
    }

    private func plan(_ values: String...) -> ContentDecoder.Plan {
        ContentDecoder.plan(for: ReceivedFields(values.map { HeaderField(name: "Content-Encoding", value: $0) }))
    }

    @Test func brAndZstdArePlannedLikeTheOtherCodings() {
        #expect(plan("br") == .decode([.br]))
        #expect(plan(" BR ") == .decode([.br]))
        #expect(plan("Zstd") == .decode([.zstd]))
        #expect(plan("gzip, br") == .decode([.br, .gzip]))
        #expect(plan("zstd", "deflate") == .decode([.deflate, .zstd]))
        #expect(plan("br, identity, zstd") == .decode([.zstd, .br]))
        // Still unsupported: anything else in the list keeps the whole body as received.
        #expect(plan("br, compress") == .unsupported)
        #expect(plan("zstd;level=3") == .unsupported)
    }

    // MARK: - Whole and split

    @Test(arguments: [ContentDecoder.Coding.br, .zstd])
    func aSmallBodySplitAtEveryByteDecodesTheSame(_ coding: ContentDecoder.Coding) throws {
        let original = compressibleText(count: 700)
        let body = coding == .br ? brotliCompressed(original) : zstdCompressed(original)
        #expect(try decode([coding], body) == original)
        for cut in 0...body.count {
            #expect(try decode([coding], body, cuts: [cut, body.count]) == original, "cut at \(cut)")
        }
        #expect(try decode([coding], body, cuts: Array(1...body.count)) == original)
    }

    @Test(arguments: [ContentDecoder.Coding.br, .zstd])
    func aLargeBodyInRandomReadsDecodesTheSame(_ coding: ContentDecoder.Coding) throws {
        // Several 64 KiB steps per read, and reads that end anywhere in blocks and headers.
        let original = compressibleText(count: 3 << 20, seed: 7)
        let body = coding == .br ? brotliCompressed(original, quality: 4) : zstdCompressed(original, level: 1)
        #expect(try decode([coding], body) == original)
        for seed in 1...3 as ClosedRange<UInt64> {
            #expect(try decode([coding], body, cuts: randomCuts(body.count, pieces: 300, seed: seed)) == original)
        }
        #expect(try decode([coding], body, cuts: randomCuts(body.count, pieces: body.count / 3, seed: 9)) == original)
    }

    @Test func brAtEveryQualityAndWindowDecodes() throws {
        let original = compressibleText(count: 40_000, seed: 3)
        for quality in [0, 1, 5, 9, 11] as [Int32] {
            for lgwin in [10, 16, 24] as [Int32] {
                let body = brotliCompressed(original, quality: quality, lgwin: lgwin)
                #expect(try decode([.br], body, cuts: randomCuts(body.count, pieces: 40, seed: UInt64(quality))) == original,
                        "quality \(quality), window \(lgwin)")
            }
        }
        // Nothing at all is a stream of its own (one byte).
        #expect(try decode([.br], brotliCompressed(Data())) == Data())
    }

    // MARK: - zstd frames

    /// RFC 8878 §3.1: frames one after another are one body, as gzip members are, and skippable
    /// frames are skipped, wherever the reads end.
    @Test func severalZstdFramesAndSkippableFramesAreOneBody() throws {
        let first = compressibleText(count: 500, seed: 1)
        let second = compressibleText(count: 300_000, seed: 2)
        let body = zstdSkippableFrame([1, 2, 3]) + zstdCompressed(first) + zstdSkippableFrame([], variant: 0xF)
            + zstdCompressed(second, checksum: false) + zstdCompressed(Data()) + zstdSkippableFrame(Array(repeating: 9, count: 70))
        let expected = first + second
        #expect(try decode([.zstd], body) == expected)
        #expect(try decode([.zstd], body, cuts: randomCuts(body.count, pieces: 500, seed: 4)) == expected)
        let small = zstdCompressed(first) + zstdSkippableFrame([7, 7]) + zstdCompressed(Data("end".utf8))
        for cut in 0...small.count {
            #expect(try decode([.zstd], small, cuts: [cut, small.count]) == first + Data("end".utf8), "cut at \(cut)")
        }
        #expect(try decode([.zstd], zstdSkippableFrame([1])) == Data())
    }

    /// RFC 9659 §3: an HTTP encoder uses at most an 8 MiB window, and a decoder may refuse more:
    /// a hostile frame would otherwise have us allocate the window it names (up to 2 GiB on 64-bit).
    @Test func aZstdFrameWithAWindowOver8MiBIsRefused() throws {
        let original = compressibleText(count: 10_000)
        #expect(try decode([.zstd], zstdCompressed(original, windowLog: 23)) == original)
        for windowLog in [24, 27] as [Int32] {
            let body = zstdCompressed(original, windowLog: windowLog)
            var failure: ContentDecoder.Failure?
            do { _ = try decode([.zstd], body) } catch { failure = error }
            guard case .corrupt(let why) = failure else {
                Issue.record("window 2^\(windowLog): \(String(describing: failure))")
                continue
            }
            #expect(why.contains("8 MiB"), "\(why)")
            // Refused at the frame header, however it arrives.
            #expect(throws: ContentDecoder.Failure.self) { try decode([.zstd], body, cuts: Array(1...body.count)) }
        }
    }

    // MARK: - Layers

    @Test func layeredCodingsWithBrAndZstdDecodeToTheOriginal() throws {
        let original = compressibleText(count: 100_000, seed: 5)
        // "Content-Encoding: gzip, br": gzipped first, then brotli over it; undone br first.
        let gzipThenBr = brotliCompressed(try gzipCompressed(original))
        #expect(try decode([.br, .gzip], gzipThenBr, cuts: randomCuts(gzipThenBr.count, pieces: 200, seed: 1)) == original)
        // "br, zstd" and "zstd, br".
        let brThenZstd = zstdCompressed(brotliCompressed(original))
        #expect(try decode([.zstd, .br], brThenZstd, cuts: randomCuts(brThenZstd.count, pieces: 200, seed: 2)) == original)
        let zstdThenBr = brotliCompressed(zstdCompressed(original))
        #expect(try decode([.br, .zstd], zstdThenBr, cuts: Array(1...zstdThenBr.count)) == original)
        // "deflate, zstd" (raw deflate inside, as some servers send deflate) and the plan for it.
        let deflated = Data(try gzipCompressed(original).dropFirst(10).dropLast(8))
        #expect(try decode([.zstd, .deflate], zstdCompressed(deflated)) == original)
        let fields = ReceivedFields([HeaderField(name: "Content-Encoding", value: "deflate, zstd")])
        #expect(ContentDecoder.plan(for: fields) == .decode([.zstd, .deflate]))
    }

    /// Like the gzip case Fuzz/content-decoder found: a bomb inside a zstd frame whose later
    /// block is damaged must fail as a bomb however the body is read. zstd reports nothing of a
    /// call that fails, so the stage feeds it one block at a time; a call running on into the
    /// damaged block would have dropped the bomb's bytes when the body came in one read.
    @Test func aLayeredZstdFailureDoesNotDependOnHowTheBodyWasRead() throws {
        let bomb = try gzipCompressed(Data(count: 4 << 20))
        // Incompressible bytes after the bomb: more blocks, stored raw, then the checksum. A
        // 1 KiB window makes 1 KiB blocks, so that one read's worth is many blocks: a call given
        // all of it would decode the bomb's blocks, then fail at the checksum and report nothing.
        var noise = [UInt8](repeating: 0, count: 20_000)
        var state: UInt64 = 11
        for index in noise.indices {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            noise[index] = UInt8(truncatingIfNeeded: state >> 40)
        }
        var body = [UInt8](zstdCompressed(bomb + Data(noise), windowLog: 10))
        body[body.count - 1000] ^= 0xFF  // inside the last block: the checksum fails
        let sized = ContentDecoder.Limits(maximumBytes: 1 << 20, maximumRatio: .infinity)
        for cuts in [[body.count], Array(stride(from: 7, to: body.count, by: 7)) + [body.count],
                     randomCuts(body.count, pieces: 50, seed: 3)] {
            var failure: ContentDecoder.Failure?
            do { _ = try decode([.zstd, .gzip], Data(body), cuts: cuts, limits: sized) } catch { failure = error }
            guard case .limitExceeded = failure else {
                Issue.record("\(cuts.count) reads: \(String(describing: failure))")
                continue
            }
        }
    }

    // MARK: - Cut short, damaged, trailing bytes

    @Test(arguments: [ContentDecoder.Coding.br, .zstd])
    func aStreamCutShortFailsAtTheEnd(_ coding: ContentDecoder.Coding) throws {
        let original = compressibleText(count: 5_000)
        let body = coding == .br ? brotliCompressed(original) : zstdCompressed(original)
        for length in 1..<body.count {
            let decoder = try #require(ContentDecoder(codings: [coding], limits: limits))
            // Every prefix is good data so far: nothing fails until the body ends.
            _ = try decoder.decode(Array(body.prefix(length)))
            #expect(throws: ContentDecoder.Failure.self, "\(length) of \(body.count) bytes") { try decoder.finish() }
        }
    }

    @Test(arguments: [ContentDecoder.Coding.br, .zstd])
    func garbageIsCorrupt(_ coding: ContentDecoder.Coding) throws {
        let original = compressibleText(count: 50_000)
        var damaged = [UInt8](coding == .br ? brotliCompressed(original) : zstdCompressed(original))
        damaged[damaged.count / 2] ^= 0x5A
        damaged[damaged.count / 2 + 1] ^= 0xA5
        let bodies: [Data] = [Data("<html>not compressed at all</html>".utf8), Data(damaged),
                              Data(repeating: 0xFF, count: 64)]
        for body in bodies {
            for cuts in [[body.count], Array(1...body.count)] {
                var failure: ContentDecoder.Failure?
                do { _ = try decode([coding], body, cuts: cuts) } catch { failure = error }
                guard case .corrupt = failure else {
                    Issue.record("\(coding), \(body.count) bytes in \(cuts.count) reads: \(String(describing: failure))")
                    continue
                }
            }
        }
    }

    @Test func bytesAfterTheEndAreCorrupt() throws {
        let original = Data("hello".utf8)
        // br has one stream per body: nothing may follow its last meta-block.
        #expect(throws: ContentDecoder.Failure.self) { try decode([.br], brotliCompressed(original) + Data([0])) }
        #expect(throws: ContentDecoder.Failure.self) { try decode([.br], brotliCompressed(original) + brotliCompressed(original)) }
        // After a zstd frame, only another frame: a partial magic number is cut short, a wrong
        // one (here an old, pre-RFC zstd format's) is not zstd.
        #expect(throws: ContentDecoder.Failure.self) { try decode([.zstd], zstdCompressed(original) + Data([0x28, 0xB5])) }
        #expect(throws: ContentDecoder.Failure.self) { try decode([.zstd], zstdCompressed(original) + Data([0x27, 0xB5, 0x2F, 0xFD, 0])) }
        #expect(throws: ContentDecoder.Failure.self) { try decode([.zstd], Data([0x27, 0xB5, 0x2F, 0xFD]) + zstdCompressed(original).dropFirst(4)) }
    }

    // MARK: - Bombs

    /// 100 MB of zeros is a few hundred bytes of br or kilobytes of zstd: refused, by the ratio,
    /// one 64 KiB step past the first MiB, having handed out no more than that.
    @Test(arguments: [ContentDecoder.Coding.br, .zstd])
    func aBombIsRefusedEarlyWithBoundedOutput(_ coding: ContentDecoder.Coding) throws {
        let zeros = Data(count: 100_000_000)
        let bomb = coding == .br ? brotliCompressed(zeros, quality: 1) : zstdCompressed(zeros, level: 1)
        #expect(bomb.count < 100_000)
        let started = ContinuousClock.now
        for pieceSize in [bomb.count, 100, 1] {
            let decoder = try #require(ContentDecoder(codings: [coding], limits: limits))
            var handedOut = 0
            var failure: ContentDecoder.Failure?
            do {
                for start in stride(from: 0, to: bomb.count, by: pieceSize) {
                    handedOut += try decoder.decode(Array(bomb[start..<min(start + pieceSize, bomb.count)])).count
                }
                try decoder.finish()
            } catch {
                failure = error
            }
            guard case .limitExceeded(let why) = failure else {
                Issue.record("\(coding) in \(pieceSize)-byte reads: \(String(describing: failure))")
                continue
            }
            #expect(why.contains("bomb"))
            #expect(handedOut <= ContentDecoder.Limits.ratioGrace + ContentDecoder.stepBytes)
        }
        #expect(ContinuousClock.now - started < .seconds(10))
        // The size limit stops one too, ratio or not.
        let sized = ContentDecoder.Limits(maximumBytes: 5 << 20, maximumRatio: .infinity)
        #expect(throws: ContentDecoder.Failure.limitExceeded("the decoded body is larger than \(5 << 20) bytes")) {
            try decode([coding], bomb, limits: sized)
        }
    }

    /// A bomb in an inner layer is counted at the layer that makes the bytes.
    @Test func aBombInsideAnotherLayerIsRefused() throws {
        let zstdInsideBr = brotliCompressed(zstdCompressed(Data(count: 50_000_000), level: 1))
        #expect(throws: ContentDecoder.Failure.self) { try decode([.br, .zstd], zstdInsideBr) }
        let brInsideGzip = try gzipCompressed(brotliCompressed(Data(count: 50_000_000), quality: 1))
        var failure: ContentDecoder.Failure?
        do { _ = try decode([.gzip, .br], brInsideGzip) } catch { failure = error }
        guard case .limitExceeded = failure else {
            Issue.record("\(String(describing: failure))")
            return
        }
    }
}
