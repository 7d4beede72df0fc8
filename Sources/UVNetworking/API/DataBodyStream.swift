import Foundation

/// An in-memory body read as a stream: how a `Data` body travels when it must wait behind its
/// head (`Expect: 100-continue`) or is larger than one write (`PreparedRequest`). The bytes are
/// shared with the request, not copied.
final class DataBodyStream: RequestBodyStream {
    private let data: Data
    private var offset = 0

    init(_ data: Data) {
        self.data = data
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let count = min(buffer.count, data.count - offset)
        guard count > 0 else { return 0 }
        data.withUnsafeBytes { source in
            buffer.baseAddress!.copyMemory(from: source.baseAddress! + offset, byteCount: count)
        }
        offset += count
        return count
    }
}
