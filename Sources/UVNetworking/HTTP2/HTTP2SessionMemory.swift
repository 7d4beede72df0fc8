import CNGHTTP2
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The memory nghttp2 uses for one session, kept on free lists by size class.
///
/// Each request makes nghttp2 allocate a handful of small blocks (the outgoing HEADERS item, a
/// copy of the header list, the stream, a decoded header value) and free them when the stream
/// closes. Streams open and close in bursts of dozens, one read's worth at a time, which
/// overflows malloc's per-thread cache (seven blocks per size), so most of those frees took
/// malloc's arena lock, the lock the completion thread takes too when it frees what the loop
/// made. Here a freed block goes back on its class's list and the next request takes it.
///
/// Loop-confined like the session (nghttp2 allocates only inside the session's calls). The
/// lists hold at most `cacheLimit` bytes, and `trim()` empties them: the connection does so
/// when it goes idle, so an idle connection keeps nothing here.
final class HTTP2SessionMemory {
    /// Class `i` holds blocks of `(i + 1) * granularity` bytes: fine steps, so that rounding
    /// wastes at most 31 bytes a block (an open stream holds several).
    static let granularity = 32
    static let classCount = 64
    static var largestBlock: Int { classCount * granularity }
    /// Bytes kept on the free lists at most (more than one burst of 64 streams needs).
    static let cacheLimit = 128 << 10
    /// Before each block: its class (or -1 for a block above the classes) and, for those, its
    /// size. Sixteen bytes keep the block as aligned as malloc's.
    private static let headerSize = 16

    /// The first free block of each class; a free block's first word points to the next.
    private let heads = UnsafeMutablePointer<UnsafeMutableRawPointer?>.allocate(capacity: classCount)
    @exclusivity(unchecked) private(set) var cachedBytes = 0

    init() {
        heads.initialize(repeating: nil, count: Self.classCount)
    }

    deinit {
        trim()
        heads.deallocate()
    }

    /// The allocator to give `nghttp2_session_client_new3`. Valid while `self` lives, which
    /// must be longer than the session's (the session's owner deletes it first).
    var nghttp2Allocator: nghttp2_mem {
        nghttp2_mem(mem_user_data: Unmanaged.passUnretained(self).toOpaque(),
                    malloc: Self.mallocCallback, free: Self.freeCallback,
                    calloc: Self.callocCallback, realloc: Self.reallocCallback)
    }

    /// Frees every cached block.
    func trim() {
        for index in 0..<Self.classCount {
            var block = heads[index]
            while let current = block {
                block = current.load(as: UnsafeMutableRawPointer?.self)
                free(current - Self.headerSize)
            }
            heads[index] = nil
        }
        cachedBytes = 0
    }

    // MARK: Blocks

    /// The class for `size` bytes (at most `largestBlock`): the smallest whose blocks hold them.
    private static func sizeClass(_ size: Int) -> Int {
        (max(size, 1) - 1) / granularity
    }

    private static func blockSize(_ index: Int) -> Int {
        (index + 1) * granularity
    }

    func allocate(_ size: Int) -> UnsafeMutableRawPointer? {
        guard size <= Self.largestBlock else {
            guard let raw = malloc(Self.headerSize + size) else { return nil }
            raw.storeBytes(of: -1, as: Int.self)
            raw.storeBytes(of: size, toByteOffset: 8, as: Int.self)
            return raw + Self.headerSize
        }
        let index = Self.sizeClass(size)
        if let block = heads[index] {
            heads[index] = block.load(as: UnsafeMutableRawPointer?.self)
            cachedBytes -= Self.blockSize(index)
            return block
        }
        guard let raw = malloc(Self.headerSize + Self.blockSize(index)) else { return nil }
        raw.storeBytes(of: index, as: Int.self)
        return raw + Self.headerSize
    }

    func deallocate(_ block: UnsafeMutableRawPointer?) {
        guard let block else { return }
        let index = (block - Self.headerSize).load(as: Int.self)
        guard index >= 0, cachedBytes + Self.blockSize(index) <= Self.cacheLimit else {
            free(block - Self.headerSize)
            return
        }
        block.storeBytes(of: heads[index], as: UnsafeMutableRawPointer?.self)
        heads[index] = block
        cachedBytes += Self.blockSize(index)
    }

    /// How many bytes `block` can hold.
    private static func capacity(of block: UnsafeMutableRawPointer) -> Int {
        let index = (block - headerSize).load(as: Int.self)
        return index >= 0 ? blockSize(index) : (block - headerSize).load(fromByteOffset: 8, as: Int.self)
    }

    func reallocate(_ block: UnsafeMutableRawPointer?, to size: Int) -> UnsafeMutableRawPointer? {
        guard let block else { return allocate(size) }
        let capacity = Self.capacity(of: block)
        if size <= capacity { return block }
        // As realloc: on failure the old block stays the caller's.
        guard let grown = allocate(size) else { return nil }
        grown.copyMemory(from: block, byteCount: capacity)
        deallocate(block)
        return grown
    }

    // MARK: nghttp2's callbacks

    /// Runs `body` with the allocator, not retained: nghttp2 calls only while its session, and
    /// so the session's allocator, lives.
    @inline(__always)
    private static func with<R>(_ userData: UnsafeMutableRawPointer?, _ body: (HTTP2SessionMemory) -> R) -> R {
        Unmanaged<HTTP2SessionMemory>.fromOpaque(userData!)._withUnsafeGuaranteedRef(body)
    }

    private static let mallocCallback: nghttp2_malloc = { size, userData in
        with(userData) { $0.allocate(size) }
    }

    private static let freeCallback: nghttp2_free = { block, userData in
        with(userData) { $0.deallocate(block) }
    }

    private static let callocCallback: nghttp2_calloc = { count, size, userData in
        let (total, overflow) = count.multipliedReportingOverflow(by: size)
        guard !overflow, let block = with(userData, { $0.allocate(total) }) else { return nil }
        block.initializeMemory(as: UInt8.self, repeating: 0, count: total)
        return block
    }

    private static let reallocCallback: nghttp2_realloc = { block, size, userData in
        with(userData) { $0.reallocate(block, to: size) }
    }
}
