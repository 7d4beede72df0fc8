/// A growable byte buffer that responses are written into, then handed to the socket in one
/// write.
///
/// Raw memory rather than `[UInt8]`: appends in the hot path are plain copies, with no
/// uniqueness checks, no retain/release and no exclusivity checks (the loop thread owns it).
final class OutputBuffer {
    /// The start of the bytes.
    @exclusivity(unchecked) private(set) var base: UnsafeMutablePointer<UInt8>
    /// How many bytes have been written.
    @exclusivity(unchecked) private(set) var count = 0
    @exclusivity(unchecked) private var capacity: Int

    /// Creates an empty buffer with room for `capacity` bytes before it grows.
    init(capacity: Int) {
        self.capacity = max(capacity, 64)
        base = .allocate(capacity: self.capacity)
    }

    deinit {
        base.deallocate()
    }

    /// The bytes written so far.
    var bytes: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: base, count: count)
    }

    /// Forgets the bytes, keeping the memory.
    func removeAll() {
        count = 0
    }

    /// Appends a literal (response heads are made of them).
    @inline(__always)
    func append(_ literal: StaticString) {
        append(UnsafeRawBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    /// Appends bytes.
    @inline(__always)
    func append(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        reserve(bytes.count)
        UnsafeMutableRawPointer(base + count).copyMemory(from: source, byteCount: bytes.count)
        count += bytes.count
    }

    /// Appends `value` (not negative) in decimal.
    func append(decimal value: Int) {
        let digits = Self.decimalDigits(value)
        reserve(digits)
        var remaining = value
        var index = count + digits
        repeat {
            index -= 1
            base[index] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: remaining % 10)
            remaining /= 10
        } while remaining > 0
        count += digits
    }

    /// The number of decimal digits of `value` (not negative).
    static func decimalDigits(_ value: Int) -> Int {
        var digits = 1
        var remaining = value
        while remaining >= 10 {
            remaining /= 10
            digits += 1
        }
        return digits
    }

    /// Makes room for `extra` more bytes, doubling so appends stay amortised O(1).
    @inline(__always)
    private func reserve(_ extra: Int) {
        if count + extra > capacity { grow(toHold: count + extra) }
    }

    private func grow(toHold needed: Int) {
        let newCapacity = max(needed, capacity * 2)
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.update(from: base, count: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }
}
