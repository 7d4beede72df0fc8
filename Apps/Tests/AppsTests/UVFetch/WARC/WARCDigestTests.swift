import Foundation
import Testing
@testable import UVFetchCore

@Suite(.tags(.unit)) struct WARCDigestTests {
    /// RFC 4648 §10's test vectors.
    @Test(arguments: [("", ""), ("f", "MY======"), ("fo", "MZXQ===="), ("foo", "MZXW6==="), ("foob", "MZXW6YQ="),
                      ("fooba", "MZXW6YTB"), ("foobar", "MZXW6YTBOI======")])
    func base32MatchesRFC4648(input: String, expected: String) {
        #expect(WARCDigest.base32(Array(input.utf8)) == expected)
    }

    /// SHA-1 of "" and "abc" (FIPS 180's vector a9993e36...), in the form WARC readers expect.
    @Test func sha1IsLabelledBase32() {
        #expect(WARCDigest.sha1(Data()) == "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ")
        #expect(WARCDigest.sha1(Data("abc".utf8)) == "sha1:VGMT4NSHA2AWVOR6EVYXQUGCNSONBWE5")
        #expect(WARCDigest.sha1Bytes(Data("abc".utf8)).map { String(format: "%02x", $0) }.joined()
                == "a9993e364706816aba3e25717850c26c9cd0d89d")
    }

    @Test func sliceIsDigestedAsItsOwnBytes() {
        let data = Data("xxabc".utf8)
        #expect(WARCDigest.sha1(data[2...]) == "sha1:VGMT4NSHA2AWVOR6EVYXQUGCNSONBWE5")
    }
}
