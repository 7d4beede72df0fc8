import Foundation
import Testing
@testable import UVFetchCore

/// Input lines reach `URL(string:)` in a form it keeps: what a URL cannot hold is escaped, the
/// escapes already written are not escaped again.
@Suite(.tags(.unit)) struct URLTextEscapingTests {
    private func parsed(_ text: String) -> String? { URL(string: URLTextEscaping.parseable(text))?.absoluteString }

    @Test func aCleanLineIsLeftAsItIs() {
        for line in ["http://a.example/", "https://a.example:8443/p/%41?q=%2F&r=~x#frag", "http://u:p%40@h/x;y=1,2"] {
            #expect(URLTextEscaping.parseable(line) == line)
            #expect(parsed(line) == line)
        }
    }

    @Test func escapesAlreadyWrittenAreKeptNextToCharactersThatNeedEscaping() {
        // URL(string:) alone gives "/a%20b%2541": another resource.
        #expect(parsed("http://x/a b%41") == "http://x/a%20b%41")
        #expect(parsed("http://x/é%41?q=ü %2F") == "http://x/%C3%A9%41?q=%C3%BC%20%2F")
        #expect(parsed("http://x/a|b[c]{d}\"e\"<f>^`\\") == "http://x/a%7Cb%5Bc%5D%7Bd%7D%22e%22%3Cf%3E%5E%60%5C")
    }

    @Test func aPercentThatStartsNoEscapeAndASecondHashAreEscaped() {
        #expect(parsed("http://x/100% sure") == "http://x/100%25%20sure")
        #expect(parsed("http://x/a#b#c d") == "http://x/a#b%23c%20d")
    }

    @Test func theHostIsLeftToTheParser() {
        #expect(parsed("http://bücher.example/straße %41") == "http://xn--bcher-kva.example/stra%C3%9Fe%20%41")
        #expect(parsed("http://bücher.example?q=a b") == "http://xn--bcher-kva.example?q=a%20b")
    }

    @Test func bytesThatAreNotUTF8AreEscapedOneByOne() {
        let bytes = Array("http://x/".utf8) + [0xFF, 0x20, 0xC3, 0xA9, 0x80] + Array("%41".utf8)
        #expect(URLTextEscaping.parseable(bytes: bytes) == "http://x/%FF%20%C3%A9%80%41")
        // In the host they are escaped too, and the parser refuses such a host.
        #expect(URLTextEscaping.parseable(bytes: Array("http://x".utf8) + [0xFF] + Array("/".utf8)) == "http://x%FF/")
    }
}
