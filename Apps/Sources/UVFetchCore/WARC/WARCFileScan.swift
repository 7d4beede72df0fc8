#if canImport(Glibc)
import Glibc
#endif
import CWARC
import Foundation

/// Reads an existing `.warc.gz` file through, member by member, before a run appends to it:
/// where its last whole gzip member ends, and whether it is a WARC file at all.
///
/// uvfetch writes each exchange in one write and cuts a failed write back, so its files end with
/// a whole record; only a process killed in the middle of a write(2), or a machine that lost
/// power, leaves the start of a member at the end. Appending after such a tail would hide every
/// later record from readers (they stop at the broken member), so the tail is found here and cut
/// off. A gzip member has no length field: finding its end means inflating it, so the scan
/// costs a decompression of the file (zlib inflates hundreds of MB a second), once per run.
enum WARCFileScan {
    /// What the scan found.
    enum Tail: Equatable {
        /// Empty, or whole members to the end.
        case whole
        /// Whole members up to `validEnd`, then the start of one that never ended.
        case torn(validEnd: Int64)
    }

    /// Why the file is not one to append to.
    struct NotAnArchive: Error, Equatable {
        var reason: String
    }

    /// Scans the regular file open at `descriptor` (read with pread, so its offset is left alone).
    /// - Throws: `NotAnArchive` when its first member is not gzip holding a WARC record, when
    ///   bytes after a whole member are not gzip (something else was written into it), or when
    ///   it cannot be read.
    static func scan(_ descriptor: Int32) throws(NotAnArchive) -> Tail {
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        defer {
            inflateEnd(stream)
            stream.deinitialize(count: 1)
            stream.deallocate()
        }
        // 15 + 16: gzip only. A plain .warc, or zlib data, is not what uvfetch writes.
        guard warc_inflateInit2(stream, 15 + 16) == Z_OK else { throw NotAnArchive(reason: "zlib could not start") }
        let input = UnsafeMutablePointer<UInt8>.allocate(capacity: 1 << 20)
        let output = UnsafeMutablePointer<UInt8>.allocate(capacity: 1 << 18)
        defer {
            input.deallocate()
            output.deallocate()
        }
        var fileOffset: Int64 = 0
        /// Where the member being inflated started.
        var memberStart: Int64 = 0
        /// Whether that member has given any byte of input to zlib yet.
        var inMember = false
        var firstBytes: [UInt8] = []
        while true {
            let count = pread(descriptor, input, 1 << 20, off_t(fileOffset))
            if count < 0 {
                if errno == EINTR { continue }
                throw NotAnArchive(reason: "reading it failed: \(String(cString: strerror(errno)))")
            }
            if count == 0 { break }
            stream.pointee.next_in = input
            stream.pointee.avail_in = uInt(count)
            while stream.pointee.avail_in > 0 {
                inMember = true
                stream.pointee.next_out = output
                stream.pointee.avail_out = uInt(1 << 18)
                let status = inflate(stream, Z_NO_FLUSH)
                let produced = (1 << 18) - Int(stream.pointee.avail_out)
                if firstBytes.count < 5 { firstBytes += UnsafeBufferPointer(start: output, count: min(produced, 5 - firstBytes.count)) }
                switch status {
                case Z_STREAM_END:
                    if memberStart == 0 && !firstBytes.elementsEqual("WARC/".utf8) {
                        throw NotAnArchive(reason: "it is gzip but not a WARC file (its first record does not start with WARC/)")
                    }
                    memberStart = fileOffset + Int64(count) - Int64(stream.pointee.avail_in)
                    inMember = false
                    guard inflateReset(stream) == Z_OK else { throw NotAnArchive(reason: "zlib could not restart") }
                case Z_OK, Z_BUF_ERROR:
                    continue
                default:
                    if memberStart == 0 { throw NotAnArchive(reason: "it is not a gzip-compressed WARC file") }
                    throw NotAnArchive(reason: "it is damaged at byte \(memberStart): what follows the last whole record is not a gzip member")
                }
            }
            fileOffset += Int64(count)
        }
        if !inMember { return .whole }
        // The first member cut short says nothing about what the file was: only a WARC file's
        // own tail is cut, never a file of something else.
        if memberStart == 0 && !"WARC/".utf8.starts(with: firstBytes) {
            throw NotAnArchive(reason: "it is not a WARC file")
        }
        return .torn(validEnd: memberStart)
    }
}
