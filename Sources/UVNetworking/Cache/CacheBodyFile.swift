import CZlib
import Foundation
import Glibc

/// A large stored body left on disk and played from there (`StoredExchange` reads it in
/// chunks on workers), so that serving a 64 MiB entry costs a chunk of memory, not 64 MiB.
///
/// The file is opened and checked (its size, its CRC-32, read through once in chunks) when the
/// entry is looked up, and kept open: bodies are never rewritten in place (a new one gets a new
/// name, `DiskCacheStore`), and an open descriptor keeps the bytes that were checked even if
/// another process evicts the entry meanwhile. Every method blocks: workers only.
final class CacheBodyFile: Sendable, Equatable {
    let descriptor: Int32
    /// Bytes in the body.
    let size: Int
    /// The file's name in the store's `bodies/` (what its index row names).
    let name: String

    private init(descriptor: Int32, size: Int, name: String) {
        self.descriptor = descriptor
        self.size = size
        self.name = name
    }

    deinit { close(descriptor) }

    /// Bodies at least this large are played from their file; smaller ones are read whole.
    static let threshold = 1 << 20
    /// How much one read takes.
    static let chunkSize = 64 * 1024

    /// The body file `name` in `directory` opened, when it holds exactly `size` bytes whose
    /// CRC-32 is `crc`; nil otherwise (a torn or damaged body is a miss, never a wrong one).
    static func open(_ name: String, in directory: URL, size: Int64, crc: Int64) -> CacheBodyFile? {
        let descriptor = Glibc.open(directory.appendingPathComponent(name).path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        let file = CacheBodyFile(descriptor: descriptor, size: Int(size), name: name)
        var status = stat()
        guard fstat(descriptor, &status) == 0, Int64(status.st_size) == size else { return nil }
        var running: Int64 = 0
        var offset = 0
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        while offset < file.size {
            let count = file.read(into: buffer, at: offset)
            guard count > 0 else { return nil }
            running = DiskCacheStore.crc(running, UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            offset += count
        }
        return running == crc ? file : nil
    }

    /// Up to `chunkSize` bytes from `offset`; nil on a read error or an unexpected end.
    func chunk(at offset: Int) -> Data? {
        let count = min(Self.chunkSize, size - offset)
        guard count > 0 else { return Data() }
        var data = Data(count: count)
        let read = data.withUnsafeMutableBytes { self.read(into: $0, at: offset) }
        guard read == count else { return nil }
        return data
    }

    /// The whole body; nil on a read error.
    func readAll() -> Data? {
        var data = Data(count: size)
        var offset = 0
        let complete = data.withUnsafeMutableBytes { bytes -> Bool in
            while offset < size {
                let count = read(into: UnsafeMutableRawBufferPointer(rebasing: bytes[offset..<min(size, offset + Self.chunkSize)]), at: offset)
                guard count > 0 else { return false }
                offset += count
            }
            return true
        }
        return complete ? data : nil
    }

    /// pread until `buffer` is full or the file ends; the count read, or -1 on an error.
    private func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) -> Int {
        var filled = 0
        while filled < buffer.count {
            let count = pread(descriptor, buffer.baseAddress! + filled, buffer.count - filled, off_t(offset + filled))
            if count < 0 && errno == EINTR { continue }
            if count < 0 { return -1 }
            if count == 0 { break }
            filled += count
        }
        return filled
    }

    static func == (lhs: CacheBodyFile, rhs: CacheBodyFile) -> Bool { lhs === rhs }
}
