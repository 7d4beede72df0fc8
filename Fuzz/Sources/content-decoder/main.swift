// Fuzzes ContentDecoder: the plan read from Content-Encoding fields, and the gzip, deflate (zlib
// or raw) and multi-member gzip decoding, fed whole or in pieces.
//
// Input: the first byte picks the mode (its low two bits), the next ones the options.
// - 0, 1 (stream): byte 1 picks the codings to undo (gzip, deflate, or both in either order),
//   byte 2 the output limit (1 KiB to 128 KiB), byte 3 the cuts; the rest is the body as received.
// - 2 (round trip): byte 1 picks the framing (gzip, zlib, raw deflate) and the members (1 to 3),
//   byte 2 the level, byte 3 the cuts; the rest is the content, compressed here with zlib.
// - 3 (plan): the rest is Content-Encoding field values, one per line.
//
// Invariants:
// - Split invariance: the body fed whole and fed in pieces (splitPoints) gives the same content,
//   or fails the same way (corrupt or past the limit).
// - The limit holds: no more than the output limit is ever handed out, however the body is cut
//   (a decompression bomb ends in `.limitExceeded`, not in memory growth); with the ratio limit
//   on, more than 1 MiB is handed out only within the ratio.
// - Exactly one outcome: content and a clean finish, or one typed failure; finish() says the
//   same when asked twice.
// - Round trip: content compressed by zlib (any level, framing; several gzip members) decodes to
//   exactly the content; two zlib or raw members are refused as corrupt.
// - The plan is the elements' codings, last applied first, whether the values come as one
//   field or several; an unknown coding makes it `.unsupported`.

import CZlib
import FuzzSupport
@testable import UVNetworking
import UVHTTP1

enum Outcome: Equatable {
    case content([UInt8])
    case corrupt
    case limitExceeded
}

/// Feeds `body` to a fresh decoder in pieces ending at `cuts`; checks that the output handed out
/// never passes `maximum`.
func decode(_ body: ArraySlice<UInt8>, _ codings: [ContentDecoder.Coding], maximum: Int?, ratio: Double,
            cuts: [Int]) -> Outcome {
    guard let decoder = ContentDecoder(codings: codings, limits: .init(maximumBytes: maximum, maximumRatio: ratio)) else {
        fuzzCheck(false, "zlib did not start")
        return .corrupt
    }
    var content: [UInt8] = []
    var start = body.startIndex
    do throws(ContentDecoder.Failure) {
        for cut in cuts {
            content += try decoder.decode(Array(body[start..<(body.startIndex + cut)]))
            start = body.startIndex + cut
            if let maximum { fuzzCheck(content.count <= maximum, "\(content.count) bytes handed out past the limit of \(maximum)") }
            if content.count > ContentDecoder.Limits.ratioGrace {
                fuzzCheck(Double(content.count) <= ratio * Double(cut), "\(content.count) bytes from \(cut) past the ratio \(ratio)")
            }
        }
        try decoder.finish()
    } catch {
        return outcome(of: error)
    }
    // Asked again, finish says the same (it throws only for a stream that did not end).
    let again = Result { () throws(ContentDecoder.Failure) in try decoder.finish() }
    fuzzCheck((try? again.get()) != nil, "finish succeeded, then failed")
    return .content(content)
}

func outcome(of failure: ContentDecoder.Failure) -> Outcome {
    switch failure {
    case .corrupt: .corrupt
    case .limitExceeded: .limitExceeded
    }
}

/// `content` compressed by zlib with `windowBits` (31: gzip, 15: zlib, -15: raw).
func compress(_ content: ArraySlice<UInt8>, windowBits: Int32, level: Int32) -> [UInt8] {
    var stream = z_stream()
    fuzzCheck(uvn_deflateInit2(&stream, level, Z_DEFLATED, windowBits, 8, Z_DEFAULT_STRATEGY) == Z_OK, "deflateInit2 failed")
    defer { deflateEnd(&stream) }
    var input = Array(content)
    var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, UInt(input.count))) + 32)
    let status = input.withUnsafeMutableBufferPointer { source in
        output.withUnsafeMutableBufferPointer { target in
            stream.next_in = source.baseAddress
            stream.avail_in = UInt32(source.count)
            stream.next_out = target.baseAddress
            stream.avail_out = UInt32(target.count)
            return deflate(&stream, Z_FINISH)
        }
    }
    fuzzCheck(status == Z_STREAM_END, "deflate did not finish: \(status)")
    return Array(output[0..<Int(stream.total_out)])
}

let codingChoices: [[ContentDecoder.Coding]] = [[.gzip], [.deflate], [.gzip, .deflate], [.deflate, .gzip]]

func fuzzStream(_ input: inout FuzzInput) {
    let codings = codingChoices[Int(input.byte() % 4)]
    let maximum = 1 << (10 + Int(input.byte() % 8))
    let seed = input.byte()
    let body = input.remaining()
    let whole = [body.count]
    let cuts = splitPoints(count: body.count, seed: seed)
    // Without the ratio limit, whose verdict depends on how much had arrived when it was checked.
    let expected = decode(body, codings, maximum: maximum, ratio: .infinity, cuts: whole)
    let pieces = decode(body, codings, maximum: maximum, ratio: .infinity, cuts: cuts)
    fuzzCheck(pieces == expected, "\(codings) of \(body.count) bytes: whole gave \(summary(expected)), pieces \(cuts) gave \(summary(pieces))")
    // With it: the same content, or a bomb refused.
    let rated = decode(body, codings, maximum: nil, ratio: 100, cuts: cuts)
    if case .content = expected, rated != expected { fuzzCheck(rated == .limitExceeded, "the ratio limit changed \(summary(expected)) into \(summary(rated))") }
}

func summary(_ outcome: Outcome) -> String {
    if case .content(let bytes) = outcome { return "\(bytes.count) bytes" }
    return "\(outcome)"
}

func fuzzRoundTrip(_ input: inout FuzzInput) {
    let shape = input.byte()
    let level = Int32(input.byte() % 10)
    let seed = input.byte()
    let content = input.remaining()
    let (windowBits, coding): (Int32, ContentDecoder.Coding) = [(31, .gzip), (15, .deflate), (-15, .deflate)][Int(shape % 3)]
    let members = 1 + Int(shape / 3 % 3)
    // Each member holds a part of the content: gzip's members concatenate (RFC 1952 §2.2).
    var body: [UInt8] = []
    let size = (content.count + members - 1) / max(members, 1)
    for member in 0..<members {
        let start = content.startIndex + min(content.count, member * size)
        let end = content.startIndex + min(content.count, (member + 1) * size)
        body += compress(content[start..<end], windowBits: windowBits, level: level)
    }
    let cuts = splitPoints(count: body.count, seed: seed)
    let decoded = decode(body[...], [coding], maximum: nil, ratio: .infinity, cuts: cuts)
    if coding == .gzip || members == 1 {
        fuzzCheck(decoded == .content(Array(content)), "\(content.count) bytes, windowBits \(windowBits), \(members) members, level \(level): \(summary(decoded))")
    } else {
        fuzzCheck(decoded == .corrupt, "\(members) \(windowBits == 15 ? "zlib" : "raw deflate") members decoded: \(summary(decoded))")
    }
}

/// The plan computed here from the elements, as RFC 9110 §8.4 reads them.
func expectedPlan(_ values: [String]) -> ContentDecoder.Plan {
    var applied: [ContentDecoder.Coding] = []
    for element in values.flatMap({ $0.split(separator: ",", omittingEmptySubsequences: false) }) {
        let token = element.trimmingHTTPWhitespace.lowercased()
        switch token {
        case "", "identity": continue
        case "gzip", "x-gzip": applied.append(.gzip)
        case "deflate": applied.append(.deflate)
        default: return .unsupported
        }
    }
    return applied.isEmpty ? .identity : .decode(applied.reversed())
}

extension Substring {
    /// Without spaces and tabs around (HeaderField values are already trimmed so; elements are
    /// not). Byte by byte, as RFC 9110's OWS is bytes, and fast: Characters reversed twice took a
    /// third of the harness's time.
    var trimmingHTTPWhitespace: String {
        let isBlank: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 }
        guard let first = utf8.firstIndex(where: { !isBlank($0) }), let last = utf8.lastIndex(where: { !isBlank($0) }) else { return "" }
        return String(decoding: utf8[first...last], as: UTF8.self)
    }
}

func fuzzPlan(_ input: inout FuzzInput) {
    let text = String(decoding: input.remaining(), as: UTF8.self)
    let values = text.split(separator: "\n", omittingEmptySubsequences: false).map { String($0.trimmingHTTPWhitespace) }
    let fields = ReceivedFields(values.map { HeaderField(name: "Content-Encoding", value: $0) } + [HeaderField(name: "Content-Type", value: "text/plain")])
    let plan = ContentDecoder.plan(for: fields)
    fuzzCheck(plan == expectedPlan(values), "\(values) planned as \(plan), not \(expectedPlan(values))")
    let joined = ReceivedFields([HeaderField(name: "content-encoding", value: values.joined(separator: ", ").trimmingHTTPWhitespaceString)])
    fuzzCheck(ContentDecoder.plan(for: joined) == plan, "\(values) joined in one field planned differently")
}

extension String {
    var trimmingHTTPWhitespaceString: String { self[...].trimmingHTTPWhitespace }
}

runFuzzer { bytes in
    var input = FuzzInput(bytes)
    switch input.byte() % 4 {
    case 0, 1: fuzzStream(&input)
    case 2: fuzzRoundTrip(&input)
    default: fuzzPlan(&input)
    }
}
