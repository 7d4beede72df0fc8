import CBrotli

/// Undoes br (RFC 7932) with one brotli decoder.
///
/// Brotli keeps up to its window (at most 16 MiB; the large-window extension, which is not
/// RFC 7932, stays off) of decoded bytes in a ring buffer, and writes them out when the buffer
/// wraps, when the input runs out and at the end. They are taken 64 KiB at a time with the limits
/// checked after each step, so a bomb (brotli can expand a few bytes to far more than gzip's
/// ~1030x) stops one step past a limit. One stream per body: unlike gzip's members, nothing may
/// follow its last meta-block.
final class BrotliStage: ContentDecodingStage {
    private let state: OpaquePointer
    private var meter: DecodedOutputMeter
    /// Bytes this stage was given.
    private var consumedInput = 0
    private var ended = false
    private var output = [UInt8](repeating: 0, count: ContentDecoder.stepBytes)

    typealias Failure = ContentDecoder.Failure

    /// nil if brotli cannot allocate its decoder.
    init?(limits: ContentDecoder.Limits) {
        guard let state = BrotliDecoderCreateInstance(nil, nil, nil) else { return nil }
        self.state = state
        meter = DecodedOutputMeter(limits: limits, coding: .br)
    }

    deinit {
        BrotliDecoderDestroyInstance(state)
    }

    func decode(_ bytes: UnsafeRawBufferPointer, received: Int, into decoded: inout [UInt8]) throws(Failure) {
        meter.received = received
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        consumedInput += bytes.count
        if ended { throw .corrupt("bytes after the end of the br stream") }
        var availableIn = bytes.count
        var nextIn: UnsafePointer<UInt8>? = base.assumingMemoryBound(to: UInt8.self)
        var result: BrotliDecoderResult
        repeat {
            var made = 0
            result = output.withUnsafeMutableBufferPointer { target in
                var availableOut = target.count
                var nextOut = target.baseAddress
                let result = BrotliDecoderDecompressStream(state, &availableIn, &nextIn, &availableOut, &nextOut, nil)
                made = target.count - availableOut
                return result
            }
            if made > 0 {
                decoded.append(contentsOf: output[0..<made])
                meter.add(made)
            }
            // After every step, whatever brotli says: a bomb is stopped here, with at most one
            // step handed out past the limit.
            try meter.check()
        } while result == BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT
        switch result {
        case BROTLI_DECODER_RESULT_SUCCESS:
            ended = true
            if availableIn > 0 { throw .corrupt("bytes after the end of the br stream") }
        case BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT:
            break
        default:
            throw .corrupt("invalid br data: brotli reports \(errorName)")
        }
    }

    func finish() throws(Failure) {
        guard ended || consumedInput == 0 else { throw .corrupt("the br stream ended before its last meta-block") }
    }

    /// Brotli's name for the error that stopped it (`CL_SPACE`, `PADDING_1`, ...), so that a
    /// failure says what was wrong with the data.
    private var errorName: String {
        let code = BrotliDecoderGetErrorCode(state)
        guard let name = BrotliDecoderErrorString(code) else { return "error \(code.rawValue)" }
        return String(cString: name)
    }
}
