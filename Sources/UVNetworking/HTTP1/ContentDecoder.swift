import CZlib

/// Decodes a gzip or deflate response body (RFC 9110 §8.4.1) as it arrives, with zlib, within
/// limits that stop a decompression bomb early: a total size, and a ratio of decoded to received
/// bytes once the output passes 1 MiB (small bodies compress by large ratios harmlessly).
///
/// Loop-confined: bodies are decoded as they are read, so that progress, streams and the size
/// limit see decoded bytes without a second pass. zlib inflates at several hundred MB/s, in
/// 64 KiB steps, so one read's worth never holds the loop for long.
final class ContentDecoder {
    enum Coding: Equatable { case gzip, deflate }

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

    private let stream: UnsafeMutablePointer<z_stream>
    private let coding: Coding
    private let limits: Limits
    private var received = 0
    private var produced = 0
    private var ended = false
    /// For deflate: whether raw deflate (no zlib header) was detected, which some servers send.
    private var triedRawDeflate = false
    private var output = [UInt8](repeating: 0, count: 64 * 1024)

    /// The coding named by a response's Content-Encoding, if it is one this decoder handles
    /// alone ("gzip", "x-gzip", "deflate"); nil for none, identity, or anything else, whose
    /// body is delivered as received.
    static func coding(ofContentEncoding value: String) -> Coding? {
        switch value.trimmingCharacters(in: [" ", "\t"]).lowercased() {
        case "gzip", "x-gzip": return .gzip
        case "deflate": return .deflate
        default: return nil
        }
    }

    init?(coding: Coding, limits: Limits) {
        self.coding = coding
        self.limits = limits
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

    /// Decodes `bytes`; returns what they decoded to (possibly nothing yet).
    func decode(_ bytes: [UInt8]) throws(Failure) -> [UInt8] {
        received += bytes.count
        var decoded: [UInt8] = []
        var input = bytes[...]
        while !input.isEmpty {
            if ended {
                // gzip allows several members one after another; anything else after the end is
                // not part of the body.
                guard coding == .gzip else { throw .corrupt("bytes after the end of the deflate stream") }
                inflateReset(stream)
                ended = false
            }
            let consumed = try inflate(input, into: &decoded)
            input = input.dropFirst(consumed)
        }
        return decoded
    }

    /// The body ended: throws if the compressed stream did not.
    func finish() throws(Failure) {
        guard ended || received == 0 else { throw .corrupt("the \(coding) stream ended before its end marker") }
    }

    /// One inflate pass over `input`; returns how many bytes of it were consumed.
    private func inflate(_ input: ArraySlice<UInt8>, into decoded: inout [UInt8]) throws(Failure) -> Int {
        let count = input.count
        var status: Int32 = Z_OK
        let consumed = input.withUnsafeBufferPointer { source -> Int in
            stream.pointee.next_in = UnsafeMutablePointer(mutating: source.baseAddress)
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
        }
        try checkLimits()
        switch status {
        case Z_OK, Z_BUF_ERROR:
            return consumed
        case Z_STREAM_END:
            ended = true
            return consumed
        case Z_DATA_ERROR where coding == .deflate && !triedRawDeflate && produced == 0:
            // No zlib header: raw deflate (RFC 1951), as some servers send for "deflate".
            triedRawDeflate = true
            inflateEnd(stream)
            stream.initialize(to: z_stream())
            guard uvn_inflateInit2(stream, -15) == Z_OK else { throw .corrupt("zlib could not restart for raw deflate") }
            return 0
        default:
            let message = stream.pointee.msg.map { String(cString: $0) } ?? "zlib status \(status)"
            throw .corrupt("invalid \(coding) data: \(message)")
        }
    }

    private var exceedsLimit: Bool {
        if let maximum = limits.maximumBytes, produced > maximum { return true }
        return produced > Limits.ratioGrace && Double(produced) > limits.maximumRatio * Double(max(received, 1))
    }

    private func checkLimits() throws(Failure) {
        if let maximum = limits.maximumBytes, produced > maximum {
            throw .limitExceeded("the decoded body is larger than \(maximum) bytes")
        }
        if produced > Limits.ratioGrace && Double(produced) > limits.maximumRatio * Double(max(received, 1)) {
            throw .limitExceeded("\(received) bytes of \(coding) data decoded to more than \(produced) bytes, past the limit of \(Int(limits.maximumRatio))x: refused as a decompression bomb")
        }
    }
}
