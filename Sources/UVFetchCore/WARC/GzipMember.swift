import CZlib
import Foundation

/// Compresses bytes as one complete gzip member (RFC 1952). A `.warc.gz` file is such members
/// one after another, one per record, so a reader can start at any record's offset.
enum GzipMember {
    /// `bytes` as a gzip member, at zlib's default level.
    static func compress(_ bytes: Data) -> Data {
        var stream = z_stream()
        // windowBits 15 + 16: a gzip header and trailer instead of zlib's.
        let initialized = uvn_deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY)
        // Fails only for bad arguments (constant here) or no memory.
        precondition(initialized == Z_OK, "zlib's deflateInit2 failed: \(initialized)")
        defer { deflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(bytes.count))))
        let status: Int32 = bytes.withUnsafeBytes { input in
            output.withUnsafeMutableBufferPointer { out in
                stream.next_in = UnsafeMutablePointer(mutating: input.bindMemory(to: Bytef.self).baseAddress)
                stream.avail_in = uInt(input.count)
                stream.next_out = out.baseAddress
                stream.avail_out = uInt(out.count)
                // deflateBound leaves room for everything: one call ends the member.
                return deflate(&stream, Z_FINISH)
            }
        }
        precondition(status == Z_STREAM_END, "zlib's deflate did not finish: \(status)")
        return Data(output.prefix(Int(stream.total_out)))
    }
}
