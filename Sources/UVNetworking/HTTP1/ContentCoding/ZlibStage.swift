import CZlib

/// Undoes gzip or deflate (RFC 9110 §8.4.1) with one zlib stream.
///
/// zlib inflates at several hundred MB/s, in 64 KiB steps, so one read's worth never holds the
/// loop for long.
final class ZlibStage: ContentDecodingStage {
    private let stream: UnsafeMutablePointer<z_stream>
    private let coding: ContentDecoder.Coding
    private var meter: DecodedOutputMeter
    /// Bytes this stage was given.
    private var consumedInput = 0
    private var ended = false
    /// For deflate: the first byte, held until the second tells zlib framing from raw deflate
    /// (input may come a byte at a time, from the wire or from an outer coding).
    private var heldFirstByte: UInt8?
    private var framingKnown: Bool
    private var output = [UInt8](repeating: 0, count: ContentDecoder.stepBytes)

    typealias Failure = ContentDecoder.Failure

    /// A stage for `coding`, `.gzip` or `.deflate`; nil if zlib cannot start.
    init?(coding: ContentDecoder.Coding, limits: ContentDecoder.Limits) {
        self.coding = coding
        meter = DecodedOutputMeter(limits: limits, coding: coding)
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

    func decode(_ bytes: UnsafeRawBufferPointer, received: Int, into decoded: inout [UInt8]) throws(Failure) {
        consumedInput += bytes.count
        meter.received = received
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
                meter.add(made)
                if status != Z_OK { break }
                // Stop when the input is used up and zlib had room to spare (nothing held back).
                if stream.pointee.avail_in == 0 && made < output.count { break }
                if made == 0 && stream.pointee.avail_in == before { break }
                if meter.isPastLimit { break }
            }
            return count - Int(stream.pointee.avail_in)
        }()
        try meter.check()
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
}
