import CZlib
import UVHTTP1

/// Decodes a response body encoded with gzip or deflate (RFC 9110 §8.4.1), once or in layers,
/// as it arrives, with zlib, within limits that stop a decompression bomb early: a total size,
/// and a ratio of decoded to received bytes once the output passes 1 MiB (small bodies compress
/// by large ratios harmlessly).
///
/// Loop-confined: bodies are decoded as they are read, so that progress, streams and the size
/// limit see decoded bytes without a second pass. zlib inflates at several hundred MB/s, in
/// 64 KiB steps, so one read's worth never holds the loop for long.
final class ContentDecoder {
    enum Coding: Equatable { case gzip, deflate }

    /// What a response's Content-Encoding asks of the decoder.
    enum Plan: Equatable {
        /// No coding (no field, or only `identity`): the body is the content.
        case identity
        /// Undo these codings, in this order (the last one applied first).
        case decode([Coding])
        /// A coding this decoder cannot undo is listed: the body is delivered as received, with
        /// the field that says how it is encoded. Never half decoded.
        case unsupported
    }

    struct Limits {
        /// The most decoded bytes accepted (nil: no limit).
        var maximumBytes: Int?
        /// The most decoded bytes per received byte, checked past `ratioGrace` decoded bytes.
        var maximumRatio: Double
        static let ratioGrace = 1 << 20
    }

    enum Failure: Error, Equatable {
        /// Not valid gzip or deflate data, or it stopped short.
        case corrupt(String)
        /// Past a limit: a bomb, or just too large.
        case limitExceeded(String)
    }

    /// One inflater per coding, the outermost (last applied) first.
    private let stages: [Inflater]
    /// Bytes received, as sent (the ratio limit compares every stage's output with them).
    private var received = 0

    /// What `headers`' Content-Encoding fields ask for (RFC 9110 §8.4): every element of every
    /// field, in the order the codings were applied. `gzip`, `x-gzip` and `deflate` can be
    /// undone; `identity` is nothing to undo; any other coding (br, zstd, compress, ...) makes
    /// the whole body `unsupported`.
    static func plan(for headers: ReceivedFields) -> Plan {
        // Most responses have no Content-Encoding: nothing is allocated for them.
        guard headers.contains(lowercaseName: "content-encoding") else { return .identity }
        var applied: [Coding] = []
        for index in headers.indices {
            let known = headers.withField(at: index) { name, value -> Bool in
                guard DecoderASCII.equalsLowercase(name, "content-encoding") else { return true }
                var elementStart = 0
                for end in 0...value.count where end == value.count || value[end] == UInt8(ascii: ",") {
                    let element = DecoderASCII.trimmingWhitespace(UnsafeBufferPointer(rebasing: value[elementStart..<end]))
                    elementStart = end + 1
                    if element.isEmpty || DecoderASCII.equalsLowercase(element, "identity") { continue }
                    if DecoderASCII.equalsLowercase(element, "gzip") || DecoderASCII.equalsLowercase(element, "x-gzip") {
                        applied.append(.gzip)
                    } else if DecoderASCII.equalsLowercase(element, "deflate") {
                        applied.append(.deflate)
                    } else {
                        return false
                    }
                }
                return true
            }
            if !known { return .unsupported }
        }
        return applied.isEmpty ? .identity : .decode(applied.reversed())
    }

    /// A decoder that undoes `codings` in this order (the last one applied first); nil if zlib
    /// cannot start.
    init?(codings: [Coding], limits: Limits) {
        var stages: [Inflater] = []
        for coding in codings {
            guard let stage = Inflater(coding: coding, limits: limits) else { return nil }
            stages.append(stage)
        }
        self.stages = stages
    }

    /// A decoder of one coding.
    convenience init?(coding: Coding, limits: Limits) {
        self.init(codings: [coding], limits: limits)
    }

    /// Decodes `bytes` (valid only during the call); returns what they decoded to (possibly
    /// nothing yet).
    ///
    /// With layers, a stage that fails hands what it decoded before the failure to the stages
    /// after it first: a failure they find lies earlier in the content and is the one thrown.
    /// So the failure does not depend on how the body was cut into reads (an inner bomb
    /// followed by a damaged outer trailer is `.limitExceeded` whether it arrives in one read
    /// or in several).
    func decode(_ bytes: UnsafeRawBufferPointer) throws(Failure) -> [UInt8] {
        received += bytes.count
        guard let first = stages.first else { return Array(bytes) }
        let (data, failure) = first.decode(bytes, received: received)
        return try decode(data, from: 1, thenThrow: failure)
    }

    /// Runs `data` through the stages from `index` on, then throws `failure` if there is one.
    private func decode(_ data: [UInt8], from index: Int, thenThrow failure: Failure?) throws(Failure) -> [UInt8] {
        var data = data
        for position in index..<stages.count {
            if data.isEmpty { break }
            let (decoded, stageFailure) = data.withUnsafeBytes { stages[position].decode($0, received: received) }
            // A later stage's failure supersedes `failure`: it is earlier in the content.
            if let stageFailure { return try decode(decoded, from: position + 1, thenThrow: stageFailure) }
            data = decoded
        }
        if let failure { throw failure }
        return data
    }

    /// Decodes `bytes`; returns what they decoded to (possibly nothing yet).
    func decode(_ bytes: [UInt8]) throws(Failure) -> [UInt8] {
        try bytes.withUnsafeBytes { pointer in Result { () throws(Failure) in try self.decode(pointer) } }.get()
    }

    /// The body ended: throws if a compressed stream did not.
    func finish() throws(Failure) {
        for stage in stages { try stage.finish() }
    }
}

/// Undoes one coding with one zlib stream.
private final class Inflater {
    private let stream: UnsafeMutablePointer<z_stream>
    private let coding: ContentDecoder.Coding
    private let limits: ContentDecoder.Limits
    /// Bytes this stage was given.
    private var consumedInput = 0
    /// Bytes received off the wire, for the ratio limit.
    private var received = 0
    private var produced = 0
    private var ended = false
    /// For deflate: the first byte, held until the second tells zlib framing from raw deflate
    /// (input may come a byte at a time, from the wire or from an outer coding).
    private var heldFirstByte: UInt8?
    private var framingKnown: Bool
    private var output = [UInt8](repeating: 0, count: 64 * 1024)

    typealias Failure = ContentDecoder.Failure

    init?(coding: ContentDecoder.Coding, limits: ContentDecoder.Limits) {
        self.coding = coding
        self.limits = limits
        framingKnown = coding == .gzip
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        // 15 + 16: gzip framing only; 15: the zlib framing deflate means (RFC 9110 §8.4.1.2).
        guard uvn_inflateInit2(stream, coding == .gzip ? 15 + 16 : 15) == Z_OK else {
            stream.deallocate()
            return nil
        }
    }

    deinit {
        inflateEnd(stream)
        stream.deallocate()
    }

    /// Decodes `bytes` (valid only during the call), `received` wire bytes in so far; returns
    /// what they decoded to, and the failure that stopped it, if one did (what was decoded
    /// before the failure is still returned, for the stages after this one).
    func decode(_ bytes: UnsafeRawBufferPointer, received: Int) -> (decoded: [UInt8], failure: Failure?) {
        var decoded: [UInt8] = []
        do {
            try decode(bytes, received: received, into: &decoded)
        } catch {
            return (decoded, error)
        }
        return (decoded, nil)
    }

    private func decode(_ bytes: UnsafeRawBufferPointer, received: Int, into decoded: inout [UInt8]) throws(Failure) {
        consumedInput += bytes.count
        self.received = received
        var input = bytes
        if !framingKnown {
            guard let first = heldFirstByte ?? input.first else { return }
            if heldFirstByte == nil { input = UnsafeRawBufferPointer(rebasing: input.dropFirst()) }
            guard let second = input.first else {
                heldFirstByte = first
                return
            }
            heldFirstByte = nil
            framingKnown = true
            // A zlib header (RFC 1950): method 8, and the two bytes a multiple of 31.
            if first & 0x0F != 8 || (UInt16(first) << 8 | UInt16(second)) % 31 != 0 { try restartAsRawDeflate() }
            // The first byte was held apart: it goes in alone, then the rest.
            try [first].withUnsafeBytes { one in Result { () throws(Failure) in try inflateAll(one, into: &decoded) } }.get()
        }
        try inflateAll(input, into: &decoded)
    }

    private func inflateAll(_ bytes: UnsafeRawBufferPointer, into decoded: inout [UInt8]) throws(Failure) {
        var input = bytes
        while !input.isEmpty {
            if ended {
                // gzip allows several members one after another; anything else after the end is
                // not part of the body.
                guard coding == .gzip else { throw .corrupt("bytes after the end of the deflate stream") }
                inflateReset(stream)
                ended = false
            }
            let consumed = try inflate(input, into: &decoded)
            input = UnsafeRawBufferPointer(rebasing: input.dropFirst(consumed))
        }
    }

    /// The body ended: throws if the compressed stream did not.
    func finish() throws(Failure) {
        guard ended || consumedInput == 0 else { throw .corrupt("the \(coding) stream ended before its end marker") }
    }

    /// One inflate pass over `input`; returns how many bytes of it were consumed.
    private func inflate(_ source: UnsafeRawBufferPointer, into decoded: inout [UInt8]) throws(Failure) -> Int {
        let count = source.count
        var status: Int32 = Z_OK
        let consumed = { () -> Int in
            stream.pointee.next_in = UnsafeMutablePointer(mutating: source.baseAddress?.assumingMemoryBound(to: UInt8.self))
            stream.pointee.avail_in = UInt32(source.count)
            while true {
                let before = stream.pointee.avail_in
                let made = output.withUnsafeMutableBufferPointer { target -> Int in
                    stream.pointee.next_out = target.baseAddress
                    stream.pointee.avail_out = UInt32(target.count)
                    status = CZlib.inflate(stream, Z_NO_FLUSH)
                    return target.count - Int(stream.pointee.avail_out)
                }
                if made > 0 { decoded.append(contentsOf: output[0..<made]) }
                produced += made
                if status != Z_OK { break }
                // Stop when the input is used up and zlib had room to spare (nothing held back).
                if stream.pointee.avail_in == 0 && made < output.count { break }
                if made == 0 && stream.pointee.avail_in == before { break }
                if exceedsLimit { break }
            }
            return count - Int(stream.pointee.avail_in)
        }()
        try checkLimits()
        switch status {
        case Z_OK, Z_BUF_ERROR:
            return consumed
        case Z_STREAM_END:
            ended = true
            return consumed
        default:
            let message = stream.pointee.msg.map { String(cString: $0) } ?? "zlib status \(status)"
            throw .corrupt("invalid \(coding) data: \(message)")
        }
    }

    /// Switches the stream to raw deflate (no zlib header or checksum), which some servers send
    /// for "deflate". The first two bytes decide (RFC 1950's header check), and nothing later:
    /// a retry as raw deflate after zlib failed midway would lack the bytes zlib had taken in
    /// earlier reads, so a body decoded or failed depending on how it was split (found by the
    /// content-decoder harness), and keeping those bytes would hold, without bound, a body that
    /// decodes to nothing. A raw stream passes the check only if it starts with a stored block
    /// whose padding bits are not zero, which encoders do not write.
    private func restartAsRawDeflate() throws(Failure) {
        inflateEnd(stream)
        stream.initialize(to: z_stream())
        guard uvn_inflateInit2(stream, -15) == Z_OK else { throw .corrupt("zlib could not restart for raw deflate") }
    }

    private var exceedsLimit: Bool {
        if let maximum = limits.maximumBytes, produced > maximum { return true }
        return produced > ContentDecoder.Limits.ratioGrace && Double(produced) > limits.maximumRatio * Double(max(received, 1))
    }

    private func checkLimits() throws(Failure) {
        if let maximum = limits.maximumBytes, produced > maximum {
            throw .limitExceeded("the decoded body is larger than \(maximum) bytes")
        }
        if produced > ContentDecoder.Limits.ratioGrace && Double(produced) > limits.maximumRatio * Double(max(received, 1)) {
            throw .limitExceeded("\(received) bytes of \(coding) data decoded to more than \(produced) bytes, past the limit of \(Int(limits.maximumRatio))x: refused as a decompression bomb")
        }
    }
}
