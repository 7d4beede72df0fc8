import Foundation
import Testing
@testable import UVFetchCore

@Suite(.tags(.unit)) struct GzipMemberTests {
    @Test func membersInflateOneAfterAnotherToTheirConcatenation() throws {
        let first = Data("first record\r\n".utf8)
        let second = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let a = GzipMember.compress(first), b = GzipMember.compress(second)
        #expect(a.prefix(3) == Data([0x1f, 0x8b, 0x08]))
        #expect(b.prefix(3) == Data([0x1f, 0x8b, 0x08]))
        // Each member alone, and both as one multi-member file, as gzip reads them.
        #expect(try gunzipped(a) == first)
        #expect(try gunzipped(a + b) == first + second)
    }

    @Test func emptyInputIsAWholeMember() throws {
        let member = GzipMember.compress(Data())
        #expect(member.count >= 20)
        #expect(try gunzipped(member).isEmpty)
    }
}

extension GzipMemberTests {
    /// A compressor reset between members gives each its own header and trailer.
    @Test func aReusedCompressorMakesWholeMembers() throws {
        let compressor = GzipMember()
        let records = (0..<3).map { Data("record \($0)\r\n".utf8) + Data(repeating: UInt8($0), count: 5_000) }
        let members = records.map(compressor.compress)
        for (member, record) in zip(members, records) {
            #expect(member.prefix(2) == Data([0x1f, 0x8b]))
            #expect(try gunzipped(member) == record)
        }
        #expect(try gunzipped(members.reduce(Data(), +)) == records.reduce(Data(), +))
    }
}
