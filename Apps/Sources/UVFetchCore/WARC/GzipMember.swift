import CWARC
import Foundation

/// Compresses bytes as complete gzip members (RFC 1952). A `.warc.gz` file is such members one
/// after another, one per record, so a reader can start at any record's offset.
///
/// One compressor is kept and reset between members: making zlib's state afresh (some 256 KiB,
/// zeroed) for every record cost more than compressing a small one. Not thread-safe: one owner
/// (a `WARCWriter`, on its queue).
final class GzipMember {
    private let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)

    init() {
        stream.initialize(to: z_stream())
        // windowBits 15 + 16: a gzip header and trailer instead of zlib's.
        let status = warc_deflateInit2(stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY)
        // Fails only for bad arguments (constant here) or no memory.
        precondition(status == Z_OK, "zlib's deflateInit2 failed: \(status)")
    }

    deinit {
        deflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// `bytes` as one gzip member, at zlib's default level.
    func compress(_ bytes: Data) -> Data {
        let reset = deflateReset(stream)
        precondition(reset == Z_OK, "zlib's deflateReset failed: \(reset)")
        var output = [UInt8](repeating: 0, count: Int(deflateBound(stream, uLong(bytes.count))))
        let status: Int32 = bytes.withUnsafeBytes { input in
            output.withUnsafeMutableBufferPointer { out in
                stream.pointee.next_in = UnsafeMutablePointer(mutating: input.bindMemory(to: Bytef.self).baseAddress)
                stream.pointee.avail_in = uInt(input.count)
                stream.pointee.next_out = out.baseAddress
                stream.pointee.avail_out = uInt(out.count)
                // deflateBound leaves room for everything: one call ends the member.
                return deflate(stream, Z_FINISH)
            }
        }
        precondition(status == Z_STREAM_END, "zlib's deflate did not finish: \(status)")
        output.removeLast(output.count - Int(stream.pointee.total_out))
        return Data(output)
    }

    /// `bytes` as one gzip member, by a compressor of its own.
    static func compress(_ bytes: Data) -> Data { GzipMember().compress(bytes) }
}
