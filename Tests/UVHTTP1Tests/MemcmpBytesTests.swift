import Testing
@testable import UVHTTP1

/// memcmpBytes, the decoder's and the response cache's byte compare: every length, a difference
/// at every place (the overlapping last word included).
@Suite(.tags(.unit)) struct MemcmpBytesTests {
    @Test func aDifferenceAnywhereIsSeenAndEqualBytesAreEqual() {
        for count in 0...40 {
            let a = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 1) }
            a.withUnsafeBufferPointer { left in
                var b = a
                b.withUnsafeBufferPointer { right in
                    #expect(count == 0 || memcmpBytes(left.baseAddress!, right.baseAddress!, count), "count \(count)")
                }
                for place in 0..<count {
                    b = a
                    b[place] ^= 0x20
                    b.withUnsafeBufferPointer { right in
                        #expect(!memcmpBytes(left.baseAddress!, right.baseAddress!, count), "count \(count), place \(place)")
                    }
                }
            }
        }
    }
}
