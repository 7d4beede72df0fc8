/// What `--resume` remembers of one URL: a 128-bit hash of the input's bytes for it (the line
/// trimmed of the spaces and tabs around it, or the argument), not the bytes themselves.
///
/// Sixteen bytes a URL, where keeping the bytes would cost their length plus an array's header
/// and allocation (100 or so for a usual URL): a file of ten million records is then a set of
/// about 400 MB at its peak (a million took 41 MB, spare room and growth included) rather than
/// well over a gigabyte. Two different URLs share a key with
/// probability about n²/2¹²⁹ (10⁻²³ for a hundred million), and since the hash is SipHash
/// (Swift's `Hasher`) under the process's random seed, nobody can make a list whose URLs
/// collide on purpose: the keys cannot be computed outside the process.
struct RecordedURLKey: Hashable {
    private let high: UInt64
    private let low: UInt64

    /// The key of `bytes`: two hashes of them, told apart by a leading byte.
    init(_ bytes: UnsafeRawBufferPointer) {
        high = Self.hash(bytes, domain: 1)
        low = Self.hash(bytes, domain: 2)
    }

    /// The key of the bytes of `text` (valid UTF-8).
    init(text: String) {
        var text = text
        self = text.withUTF8 { RecordedURLKey(UnsafeRawBufferPointer($0)) }
    }

    /// The key of `bytes` as given.
    init(bytes: [UInt8]) {
        self = bytes.withUnsafeBytes { RecordedURLKey($0) }
    }

    private static func hash(_ bytes: UnsafeRawBufferPointer, domain: UInt8) -> UInt64 {
        var hasher = Hasher()
        hasher.combine(domain)
        hasher.combine(bytes: bytes)
        return UInt64(truncatingIfNeeded: hasher.finalize())
    }

    // The bits are already SipHash's: the set's own hashing needs only one word of them.
    func hash(into hasher: inout Hasher) {
        hasher.combine(low)
    }
}
