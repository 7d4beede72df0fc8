import Foundation
import Testing
@testable import UVNetworking

/// The decoder alone: framings, split input, several gzip members, raw deflate, limits.
@Suite struct ContentDecoderTests {
    private let limits = ContentDecoder.Limits(maximumBytes: nil, maximumRatio: 250)

    private func decode(_ coding: ContentDecoder.Coding, _ pieces: [Data], limits: ContentDecoder.Limits? = nil) throws -> Data {
        let decoder = try #require(ContentDecoder(coding: coding, limits: limits ?? self.limits))
        var out = Data()
        for piece in pieces { out.append(contentsOf: try decoder.decode(Array(piece))) }
        try decoder.finish()
        return out
    }

    @Test func codingNamesAreReadLikeServersSendThem() {
        #expect(ContentDecoder.coding(ofContentEncoding: "gzip") == .gzip)
        #expect(ContentDecoder.coding(ofContentEncoding: " X-GZIP ") == .gzip)
        #expect(ContentDecoder.coding(ofContentEncoding: "Deflate") == .deflate)
        #expect(ContentDecoder.coding(ofContentEncoding: "br") == nil)
        #expect(ContentDecoder.coding(ofContentEncoding: "gzip, br") == nil)
        #expect(ContentDecoder.coding(ofContentEncoding: "identity") == nil)
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
