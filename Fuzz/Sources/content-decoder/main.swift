// Fuzzes ContentDecoder: the plan read from Content-Encoding fields, and the gzip, deflate (zlib
// or raw), multi-member gzip, br and zstd (several frames, skippable ones) decoding, fed whole
// or in pieces.
//
// Input: the first byte picks the mode (its low two bits), the next ones the options.
// - 0, 1 (stream): byte 1 picks the codings to undo (its low four bits: gzip, deflate, br, zstd,
//   alone or two in layers; 0 to 3 are the zlib ones, as before br and zstd), byte 2 the output
//   limit (1 KiB to 128 KiB), byte 3 the cuts; the rest is the body as received.
// - 2 (round trip): byte 1 picks the framing: below 128, zlib's (gzip, zlib, raw deflate) and
//   the members (1 to 3); from 128, br or zstd (its low bit), the streams or frames (1 to 3), the
//   brotli window or zstd's checksum and skippable frames. Byte 2 the level, byte 3 the cuts; the
//   rest is the content, compressed here by zlib, libbrotlienc or libzstd.
// - 3 (plan): the rest is Content-Encoding field values, one per line.
//
// Invariants:
// - Split invariance: the body fed whole and fed in pieces (splitPoints) gives the same content,
//   or fails the same way (corrupt or past the limit). With a br layer, both fail but perhaps
//   not the same way: brotli keeps decoded bytes in its window until the input runs out, and an
//   error drops those it had not written out, so how much reached the limit or the inner layer
//   before a corrupt byte depends on the reads (zlib and zstd, fed a block at a time, do not).
// - The limit holds: no more than the output limit is ever handed out, however the body is cut
//   (a decompression bomb ends in `.limitExceeded`, not in memory growth); with the ratio limit
//   on, more than 1 MiB is handed out only within the ratio.
// - Exactly one outcome: content and a clean finish, or one typed failure; finish() says the
//   same when asked twice.
// - Round trip: content compressed by zlib (any level, framing; several gzip members), brotli
//   (any quality and window) or zstd (any level, several frames, skippable frames between, with
//   or without checksums) decodes to exactly the content; two zlib, raw or br streams are refused
//   as corrupt.
// - The plan is the elements' codings, last applied first, whether the values come as one
//   field or several; an unknown coding makes it `.unsupported`.

import CFuzzBrotliEncoder
import CZlib
import CZstd
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
        fuzzCheck(false, "a decoder did not start")
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

/// `content` as one brotli stream, at `quality` with window `lgwin`.
func brotliCompress(_ content: ArraySlice<UInt8>, quality: Int32, lgwin: Int32) -> [UInt8] {
    var size = BrotliEncoderMaxCompressedSize(content.count)
    fuzzCheck(size > 0, "no brotli bound for \(content.count) bytes")
    var output = [UInt8](repeating: 0, count: size)
    let ok = content.withUnsafeBufferPointer { source in
        BrotliEncoderCompress(quality, lgwin, BROTLI_MODE_GENERIC, source.count, source.baseAddress, &size, &output)
    }
    fuzzCheck(ok == BROTLI_TRUE, "BrotliEncoderCompress failed")
    return Array(output[0..<size])
}

/// `content` as one zstd frame at `level`, with or without a checksum.
func zstdCompress(_ content: ArraySlice<UInt8>, level: Int32, checksum: Bool) -> [UInt8] {
    guard let context = ZSTD_createCCtx() else {
        fuzzCheck(false, "ZSTD_createCCtx failed")
        return []
    }
    defer { ZSTD_freeCCtx(context) }
    fuzzCheck(ZSTD_isError(ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, level)) == 0, "zstd level \(level)")
    fuzzCheck(ZSTD_isError(ZSTD_CCtx_setParameter(context, ZSTD_c_checksumFlag, checksum ? 1 : 0)) == 0, "zstd checksum")
    var output = [UInt8](repeating: 0, count: ZSTD_compressBound(content.count))
    let size = content.withUnsafeBytes { source in
        output.withUnsafeMutableBytes { target in
            ZSTD_compress2(context, target.baseAddress, target.count, source.baseAddress, source.count)
        }
    }
    fuzzCheck(ZSTD_isError(size) == 0, "ZSTD_compress2 failed")
    return Array(output[0..<size])
}

/// Byte 1's low four bits: the zlib codings first (the inputs found before br and zstd keep their
/// meaning), then br and zstd alone and layered with each other and with zlib's.
let codingChoices: [[ContentDecoder.Coding]] = [
    [.gzip], [.deflate], [.gzip, .deflate], [.deflate, .gzip],
    [.br], [.zstd], [.br, .gzip], [.gzip, .br], [.zstd, .gzip], [.gzip, .zstd],
    [.br, .zstd], [.zstd, .br], [.zstd, .deflate], [.br, .deflate], [.zstd, .zstd], [.deflate, .zstd],
]

func fuzzStream(_ input: inout FuzzInput) {
    let codings = codingChoices[Int(input.byte() % 16)]
    let maximum = 1 << (10 + Int(input.byte() % 8))
    let seed = input.byte()
    let body = input.remaining()
    let whole = [body.count]
    let cuts = splitPoints(count: body.count, seed: seed)
    // Without the ratio limit, whose verdict depends on how much had arrived when it was checked.
    let expected = decode(body, codings, maximum: maximum, ratio: .infinity, cuts: whole)
    let pieces = decode(body, codings, maximum: maximum, ratio: .infinity, cuts: cuts)
    // With br, failures need only agree that the body failed (see the invariants above).
    let bothFailed = codings.contains(.br) && !expected.isContent && !pieces.isContent
    fuzzCheck(pieces == expected || bothFailed, "\(codings) of \(body.count) bytes: whole gave \(summary(expected)), pieces \(cuts) gave \(summary(pieces))")
    // With it: the same content, or a bomb refused.
    let rated = decode(body, codings, maximum: nil, ratio: 100, cuts: cuts)
    if case .content = expected, rated != expected { fuzzCheck(rated == .limitExceeded, "the ratio limit changed \(summary(expected)) into \(summary(rated))") }
}

extension Outcome {
    var isContent: Bool {
        if case .content = self { return true }
        return false
    }
}

func summary(_ outcome: Outcome) -> String {
    if case .content(let bytes) = outcome { return "\(bytes.count) bytes" }
    return "\(outcome)"
}

func fuzzRoundTrip(_ input: inout FuzzInput) {
    let shape = input.byte()
    let levelByte = input.byte()
    let seed = input.byte()
    let content = input.remaining()
    if shape >= 128 {
        fuzzBrotliZstdRoundTrip(shape: shape & 0x7F, level: levelByte, seed: seed, content: content)
        return
    }
    let level = Int32(levelByte % 10)
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

/// `content` in parts of about equal size, one per stream or frame.
func parts(of content: ArraySlice<UInt8>, count: Int) -> [ArraySlice<UInt8>] {
    let size = (content.count + count - 1) / max(count, 1)
    return (0..<count).map { part in
        content[(content.startIndex + min(content.count, part * size))..<(content.startIndex + min(content.count, (part + 1) * size))]
    }
}

/// br or zstd (the low bit of `shape`) round trips: 1 to 3 streams or frames; brotli's window
/// (10 to 24 bits) and quality (0 to 11); zstd's level (-3 to 19), checksums and skippable frames.
func fuzzBrotliZstdRoundTrip(shape: UInt8, level: UInt8, seed: UInt8, content: ArraySlice<UInt8>) {
    let members = 1 + Int(shape / 2 % 3)
    var body: [UInt8] = []
    let coding: ContentDecoder.Coding
    if shape & 1 == 0 {
        coding = .br
        let lgwin = 10 + Int32(shape / 6 % 15)
        for part in parts(of: content, count: members) { body += brotliCompress(part, quality: Int32(level % 12), lgwin: lgwin) }
    } else {
        coding = .zstd
        let checksum = shape / 6 % 2 == 1
        let skippable = shape / 12 % 2 == 1
        for part in parts(of: content, count: members) {
            body += zstdCompress(part, level: Int32(level % 23) - 3, checksum: checksum)
            // A skippable frame (RFC 8878 §3.1.2) after each frame: magic 0x184D2A5?, a size, bytes.
            if skippable { body += [0x50 | level & 0x0F, 0x2A, 0x4D, 0x18, 3, 0, 0, 0, seed, level, shape] }
        }
    }
    let cuts = splitPoints(count: body.count, seed: seed)
    let decoded = decode(body[...], [coding], maximum: nil, ratio: .infinity, cuts: cuts)
    if coding == .zstd || members == 1 {
        fuzzCheck(decoded == .content(Array(content)), "\(content.count) bytes as \(members) \(coding), shape \(shape), level \(level): \(summary(decoded))")
    } else {
        fuzzCheck(decoded == .corrupt, "\(members) br streams one after another decoded: \(summary(decoded))")
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
        case "br": applied.append(.br)
        case "zstd": applied.append(.zstd)
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
