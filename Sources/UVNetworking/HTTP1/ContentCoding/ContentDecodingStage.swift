/// One coding's decoder: a layer of a `ContentDecoder` (zlib for gzip and deflate, brotli for br,
/// zstd for zstd). A protocol, so that the decoder layers them without knowing which is which;
/// each is a class, as each owns a C library's stream state.
///
/// Every stage hands out its output in steps of at most `ContentDecoder.stepBytes`, counting it
/// with a `DecodedOutputMeter` after each step, so that a bomb is stopped one step past a limit
/// rather than after it has been inflated in full.
protocol ContentDecodingStage: AnyObject {
    /// Decodes `bytes` (valid only during the call), `received` wire bytes in so far, appending
    /// what they decode to to `decoded`; throws the failure that stopped it, with what was decoded
    /// before the failure left in `decoded` (for the stages after this one).
    func decode(_ bytes: UnsafeRawBufferPointer, received: Int, into decoded: inout [UInt8]) throws(ContentDecoder.Failure)

    /// The body ended: throws if the coding's stream did not.
    func finish() throws(ContentDecoder.Failure)
}

extension ContentDecodingStage {
    /// Decodes `bytes`; returns what they decoded to, and the failure that stopped it, if one
    /// did (what was decoded before the failure is still returned, for the stages after this one).
    func decode(_ bytes: UnsafeRawBufferPointer, received: Int) -> (decoded: [UInt8], failure: ContentDecoder.Failure?) {
        var decoded: [UInt8] = []
        do {
            try decode(bytes, received: received, into: &decoded)
        } catch {
            return (decoded, error)
        }
        return (decoded, nil)
    }
}

/// What one stage has decoded, against the decoder's limits. Each stage meters its own output
/// (with layers the innermost stage's is the body, and an outer one past a limit is already a
/// bomb) against the bytes received off the wire, which all stages share.
struct DecodedOutputMeter {
    let limits: ContentDecoder.Limits
    /// Named in the failures' messages.
    let coding: ContentDecoder.Coding
    /// Bytes this stage has handed out.
    private(set) var produced = 0
    /// Bytes received off the wire so far, for the ratio limit.
    var received = 0

    init(limits: ContentDecoder.Limits, coding: ContentDecoder.Coding) {
        self.limits = limits
        self.coding = coding
    }

    mutating func add(_ count: Int) { produced += count }

    /// Past the maximum size, or past the ratio once the grace is used up.
    var isPastLimit: Bool {
        if let maximum = limits.maximumBytes, produced > maximum { return true }
        return produced > ContentDecoder.Limits.ratioGrace && Double(produced) > limits.maximumRatio * Double(max(received, 1))
    }

    /// Throws `.limitExceeded` when past a limit, saying which.
    func check() throws(ContentDecoder.Failure) {
        if let maximum = limits.maximumBytes, produced > maximum {
            throw .limitExceeded("the decoded body is larger than \(maximum) bytes")
        }
        if produced > ContentDecoder.Limits.ratioGrace && Double(produced) > limits.maximumRatio * Double(max(received, 1)) {
            throw .limitExceeded("\(received) bytes of \(coding) data decoded to more than \(produced) bytes, past the limit of \(Int(limits.maximumRatio))x: refused as a decompression bomb")
        }
    }
}
