import HTTPTypes
import Testing
@testable import UVNetworking

/// The carrier a tracer injects into per task, which must leave what `HTTPFieldsInjector` into
/// an empty `HTTPFields` leaves: the same names, values and order.
@Suite(.tags(.unit)) struct InjectedFieldsTests {
    private func injected(_ pairs: [(String, String)]) -> [(name: String, value: String)] {
        var fields = InjectedFields()
        for (key, value) in pairs { InjectedFieldsInjector().inject(value, forKey: key, into: &fields) }
        return Array(fields)
    }

    private func viaHTTPFields(_ pairs: [(String, String)]) -> [(name: String, value: String)] {
        var fields = HTTPFields()
        for (key, value) in pairs { HTTPFieldsInjector().inject(value, forKey: key, into: &fields) }
        return fields.map { ($0.name.rawName, $0.value) }
    }

    @Test(arguments: [
        [("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")],
        [("traceparent", "a"), ("tracestate", "k=v"), ("baggage", "x=1")],
        [("traceparent", "first"), ("tracestate", "s"), ("TraceParent", "second")],
        [("bad name", "skipped"), ("", "skipped"), ("ok", "kept")],
        [("v", " padded "), ("w", "a\r\nb"), ("x", ""), ("y", "del\u{7F}"), ("z", "caf\u{E9}"), ("t", "tab\there")],
    ] as [[(String, String)]])
    func leavesWhatHTTPFieldsInjectorLeaves(pairs: [(String, String)]) {
        let ours = injected(pairs)
        let theirs = viaHTTPFields(pairs)
        #expect(ours.map(\.name) == theirs.map(\.name))
        #expect(ours.map(\.value) == theirs.map(\.value))
    }

    @Test func everyValueWrittenIsOneTheEncoderTakes() {
        for value in ["a\r\nb", "\u{0}x", "ok", " ", "\u{7F}"] {
            for field in injected([("k", value)]) {
                #expect(field.value.utf8.allSatisfy { $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) })
            }
        }
    }

    /// The eight-bytes-at-a-time check against the byte-by-byte one, for every byte value at
    /// every position of strings of 1 to 20 bytes.
    @Test func visibleASCIIMatchesTheByteByByteCheck() {
        var mismatches: [String] = []
        for length in 1...20 {
            for position in 0..<length {
                for byte in UInt8.min...UInt8.max {
                    var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    bytes[position] = byte
                    let text = String(decoding: bytes, as: UTF8.self)
                    let expected = text.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }
                    if InjectedFieldsInjector.isVisibleASCII(text) != expected { mismatches.append("\(byte) at \(position) of \(length)") }
                }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(10))")
        #expect(!InjectedFieldsInjector.isVisibleASCII(""))
    }

    @Test func tokensAreTChars() {
        #expect(InjectedFieldsInjector.isToken("traceparent"))
        #expect(InjectedFieldsInjector.isToken("x-!#$%&'*+.^_`|~09AZaz"))
        for bad in ["", "a b", "a:b", "a\u{E9}", "(x)", "a\"", "a/b", "a@b", "a[b]", "a{b}", "a\\b", "a,b", "a;b", "a=b", "a?b"] {
            #expect(!InjectedFieldsInjector.isToken(bad), "\(bad)")
        }
    }
}
