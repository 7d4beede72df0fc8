import UVHTTP1

/// Decodes a response body encoded with gzip or deflate (RFC 9110 §8.4.1, zlib), br (RFC 7932,
/// brotli) or zstd (RFC 8878, zstd), once or in layers, as it arrives, within limits that stop a
/// decompression bomb early: a total size, and a ratio of decoded to received bytes once the
/// output passes 1 MiB (small bodies compress by large ratios harmlessly).
///
/// Loop-confined: bodies are decoded as they are read, so that progress, streams and the size
/// limit see decoded bytes without a second pass. Each coding is a `ContentDecodingStage` that
/// hands out its output in 64 KiB steps, so one read's worth never holds the loop for long.
final class ContentDecoder {
    /// A content coding this decoder can undo.
    enum Coding: Equatable { case gzip, deflate, br, zstd }

    /// The most bytes a stage hands out per step, checking the limits between steps.
    static let stepBytes = 64 * 1024

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
        /// Not valid data for its coding, or it stopped short.
        case corrupt(String)
        /// Past a limit: a bomb, or just too large.
        case limitExceeded(String)
    }

    /// One stage per coding, the outermost (last applied) first.
    private let stages: [any ContentDecodingStage]
    /// Bytes received, as sent (the ratio limit compares every stage's output with them).
    private var received = 0

    /// What `headers`' Content-Encoding fields ask for (RFC 9110 §8.4): every element of every
    /// field, in the order the codings were applied. `gzip`, `x-gzip`, `deflate`, `br` and
    /// `zstd` can be undone; `identity` is nothing to undo; any other coding (compress, ...)
    /// makes the whole body `unsupported`.
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
                    } else if DecoderASCII.equalsLowercase(element, "br") {
                        applied.append(.br)
                    } else if DecoderASCII.equalsLowercase(element, "zstd") {
                        applied.append(.zstd)
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

    /// A decoder that undoes `codings` in this order (the last one applied first); nil if a
    /// library cannot start its decoder (it could not allocate one).
    init?(codings: [Coding], limits: Limits) {
        var stages: [any ContentDecodingStage] = []
        stages.reserveCapacity(codings.count)
        for coding in codings {
            let stage: (any ContentDecodingStage)?
            switch coding {
            case .gzip, .deflate: stage = ZlibStage(coding: coding, limits: limits)
            case .br: stage = BrotliStage(limits: limits)
            case .zstd: stage = ZstdStage(limits: limits)
            }
            guard let stage else { return nil }
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
