import Foundation
import Testing
@testable import UVNetworking
import UVHTTP1

/// The decoder alone: framings, split input, several gzip members, raw deflate, limits (br and
/// zstd: ContentDecoderBrotliZstdTests).
@Suite(.tags(.unit)) struct ContentDecoderTests {
    private let limits = ContentDecoder.Limits(maximumBytes: nil, maximumRatio: 250)

    private func decode(_ coding: ContentDecoder.Coding, _ pieces: [Data], limits: ContentDecoder.Limits? = nil) throws -> Data {
        let decoder = try #require(ContentDecoder(coding: coding, limits: limits ?? self.limits))
        var out = Data()
        for piece in pieces { out.append(contentsOf: try decoder.decode(Array(piece))) }
        try decoder.finish()
        return out
    }

    private func plan(_ values: String...) -> ContentDecoder.Plan {
        ContentDecoder.plan(for: ReceivedFields([HeaderField(name: "Date", value: "now")]
            + values.map { HeaderField(name: "content-Encoding", value: $0) }))
    }

    @Test func codingNamesAreReadLikeServersSendThem() {
        #expect(plan("gzip") == .decode([.gzip]))
        #expect(plan(" X-GZIP ") == .decode([.gzip]))
        #expect(plan("Deflate") == .decode([.deflate]))
        #expect(plan() == .identity)
        #expect(plan("identity") == .identity)
        #expect(plan("") == .identity)
    }

    /// RFC 9110 §8.4: the codings are listed in the order they were applied, over one field or
    /// several; the decoder undoes them last first.
    @Test func everyCodingOfEveryFieldIsUndoneInReverse() {
        #expect(plan("deflate, identity, gzip") == .decode([.gzip, .deflate]))
        #expect(plan("deflate", "gzip") == .decode([.gzip, .deflate]))
        #expect(plan("gzip,", " , deflate") == .decode([.deflate, .gzip]))
        #expect(plan("gzip, gzip") == .decode([.gzip, .gzip]))
    }

    /// A coding we cannot undo anywhere in the list: the body is delivered as received (the
    /// Content-Encoding field says what it is), never half decoded.
    @Test func anUnknownCodingLeavesTheBodyAsReceived() {
        for values in [["none"], ["compress"], ["gzip, compress"], ["compress, br"], ["gzip", "x-compress"], ["gzip;q=1"], ["zstd", "exi"]] {
            #expect(plan(values) == .unsupported, "\(values)")
        }
    }

    private func plan(_ values: [String]) -> ContentDecoder.Plan {
        ContentDecoder.plan(for: ReceivedFields(values.map { HeaderField(name: "Content-Encoding", value: $0) }))
    }

    @Test func layeredCodingsDecodeToTheOriginal() throws {
        let original = Data((0..<20_000).map { UInt8($0 % 13) })
        // deflate first (raw deflate: the gzip member without its 10-byte header and 8-byte
        // trailer), then gzip over it: "Content-Encoding: deflate, gzip".
        let deflated = Data(try gzipCompressed(original).dropFirst(10).dropLast(8))
        let layered = try gzipCompressed(deflated)
        let decoder = try #require(ContentDecoder(codings: [.gzip, .deflate], limits: limits))
        var out = Data()
        for byte in layered { out.append(contentsOf: try decoder.decode([byte])) }
        try decoder.finish()
        #expect(out == original)
        // Cut short inside the inner stream: the end reports it.
        let cut = try #require(ContentDecoder(codings: [.gzip, .deflate], limits: limits))
        _ = try cut.decode(Array(try gzipCompressed(deflated.prefix(deflated.count / 2))))
        #expect(throws: ContentDecoder.Failure.self) { try cut.finish() }
    }

    @Test func layeredLimitsCountTheFinalBytes() throws {
        let zeros = try gzipCompressed(try gzipCompressed(Data(count: 8 << 20)))
        let decoder = try #require(ContentDecoder(codings: [.gzip, .gzip], limits: limits))
        #expect(throws: ContentDecoder.Failure.self) { _ = try decoder.decode(Array(zeros)) }
    }

    /// Found by Fuzz/content-decoder: a bomb inside a gzip layer whose trailer is damaged was
    /// `.corrupt` when the body came in one read (the outer layer failed before the inner one
    /// saw its bytes) and `.limitExceeded` when it came in several.
    @Test func aLayeredFailureDoesNotDependOnHowTheBodyWasRead() throws {
        var body = Array(try gzipCompressed(try gzipCompressed(Data(count: 4 << 20))))
        body[body.count - 8] ^= 0xFF  // the outer member's CRC-32
        let sized = ContentDecoder.Limits(maximumBytes: 1 << 20, maximumRatio: .infinity)
        for pieceSize in [body.count, 7, 1] {
            let decoder = try #require(ContentDecoder(codings: [.gzip, .gzip], limits: sized))
            var failure: ContentDecoder.Failure?
            do {
                for start in stride(from: 0, to: body.count, by: pieceSize) {
                    _ = try decoder.decode(Array(body[start..<min(start + pieceSize, body.count)]))
                }
                try decoder.finish()
            } catch {
                failure = error
            }
            guard case .limitExceeded = failure else {
                Issue.record("read \(pieceSize) bytes at a time: \(String(describing: failure))")
                continue
            }
        }
    }

    @Test func gzipFedOneByteAtATimeDecodesTheSame() throws {
        let original = Data((0..<50_000).map { UInt8($0 % 7) })
        let compressed = try gzipCompressed(original)
        #expect(try decode(.gzip, compressed.map { Data([$0]) }) == original)
        #expect(try decode(.gzip, [compressed]) == original)
    }

    @Test func concatenatedGzipMembersAreOneBody() throws {
        let two = try gzipCompressed(Data("first ".utf8)) + gzipCompressed(Data("second".utf8))
        #expect(try decode(.gzip, [two]) == Data("first second".utf8))
    }

    @Test func deflateAcceptsZlibFramingAndRawDeflate() throws {
        // gzip's member is 10 header bytes, the raw deflate stream, then 8 trailer bytes.
        let original = Data(repeating: 0x61, count: 10_000)
        let member = try gzipCompressed(original)
        let raw = member.dropFirst(10).dropLast(8)
        #expect(try decode(.deflate, [Data(raw)]) == original)
        // zlib framing: a 2-byte header (0x78 0x9c), the same deflate stream, an Adler-32 trailer.
        var adler = (a: UInt32(1), b: UInt32(0))
        for byte in original { adler.a = (adler.a + UInt32(byte)) % 65521; adler.b = (adler.b + adler.a) % 65521 }
        let checksum = adler.b << 16 | adler.a
        let zlib = Data([0x78, 0x9c]) + raw + Data([UInt8(checksum >> 24), UInt8(checksum >> 16 & 0xff), UInt8(checksum >> 8 & 0xff), UInt8(checksum & 0xff)])
        #expect(try decode(.deflate, [zlib]) == original)
    }

    /// A body with a valid zlib header whose data then fails is corrupt, in one read or in
    /// several: the decoder once retried it as raw deflate from the read where zlib failed, so
    /// split as below it decoded to an empty body (found by the content-decoder harness).
    @Test func zlibDataThatFailsMidwayIsCorruptHoweverItIsSplit() {
        let body = Data([0x78, 0xDA, 0xB0, 0x02, 0x00, 0x03, 0x50])
        #expect(throws: ContentDecoder.Failure.self) { try decode(.deflate, [body]) }
        #expect(throws: ContentDecoder.Failure.self) { try decode(.deflate, [body[0..<1], body[1..<5], body[5..<7]]) }
        #expect(throws: ContentDecoder.Failure.self) { try decode(.deflate, body.map { Data([$0]) }) }
    }

    /// Whether a deflate body has zlib framing is told by its first two bytes, which may come
    /// in two reads (or from an outer coding, a byte at a time).
    @Test func deflateFramingIsToldAcrossSplitInput() throws {
        let original = Data(repeating: 0x62, count: 5_000)
        let raw = Data(try gzipCompressed(original).dropFirst(10).dropLast(8))
        #expect(try decode(.deflate, raw.map { Data([$0]) }) == original)
        var adler = (a: UInt32(1), b: UInt32(0))
        for byte in original { adler.a = (adler.a + UInt32(byte)) % 65521; adler.b = (adler.b + adler.a) % 65521 }
        let checksum = adler.b << 16 | adler.a
        let zlib = Data([0x78, 0x9c]) + raw + Data([UInt8(checksum >> 24), UInt8(checksum >> 16 & 0xff), UInt8(checksum >> 8 & 0xff), UInt8(checksum & 0xff)])
        #expect(try decode(.deflate, zlib.map { Data([$0]) }) == original)
        // One byte and the end: cut short.
        #expect(throws: ContentDecoder.Failure.self) { try decode(.deflate, [Data([0x78])]) }
    }

    @Test func limitsStopDecodingEarly() throws {
        let zeros = try gzipCompressed(Data(count: 8 << 20))
        #expect(throws: ContentDecoder.Failure.self) { try decode(.gzip, [zeros]) }
        let sized = ContentDecoder.Limits(maximumBytes: 1000, maximumRatio: 1e9)
        #expect(throws: ContentDecoder.Failure.self) { try decode(.gzip, [try gzipCompressed(Data(count: 5000))], limits: sized) }
        // Under 1 MiB decoded, a high ratio is fine.
        #expect(try decode(.gzip, [try gzipCompressed(Data(count: 500_000))]).count == 500_000)
    }

    @Test func truncatedStreamFailsAtTheEnd() throws {
        let compressed = try gzipCompressed(Data(repeating: 1, count: 10_000))
        let decoder = try #require(ContentDecoder(coding: .gzip, limits: limits))
        _ = try decoder.decode(Array(compressed.prefix(compressed.count - 4)))
        #expect(throws: ContentDecoder.Failure.self) { try decoder.finish() }
    }
}
