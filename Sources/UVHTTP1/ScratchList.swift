/// A growable list that keeps its storage when emptied: an append is a store and a count, with
/// none of an Array's uniqueness checks, and emptying only resets the count. The decoder's
/// scratch (a head's bytes and lines, field bounds, folded values) lives in these; their sizes
/// are bounded by the head limit, which the scanner enforces before llhttp sees the bytes.
package struct ScratchList<Element: BitwiseCopyable>: ~Copyable {
    private var base: UnsafeMutablePointer<Element>
    /// Elements it has room for.
    package private(set) var capacity: Int
    /// Elements held.
    package private(set) var count = 0

    /// Empty, with room for `capacity` elements (none: storage comes with the first append).
    package init(capacity: Int) {
        base = .allocate(capacity: capacity)
        self.capacity = capacity
    }

    /// Frees the storage.
    deinit {
        base.deallocate()
    }

    /// The elements held; valid until the next mutation.
    package var elements: UnsafeBufferPointer<Element> { UnsafeBufferPointer(start: base, count: count) }

    /// Appends an element, doubling the storage when full.
    package mutating func append(_ element: Element) {
        if count == capacity { reserveCapacity(Swift.max(capacity * 2, 8)) }
        (base + count).initialize(to: element)
        count += 1
    }

    /// Appends `more`, doubling the storage (at least) when it does not fit.
    package mutating func append(_ more: UnsafeBufferPointer<Element>) {
        guard let source = more.baseAddress, more.count > 0 else { return }
        if count + more.count > capacity { reserveCapacity(Swift.max(count + more.count, capacity * 2)) }
        (base + count).initialize(from: source, count: more.count)
        count += more.count
    }

    /// Makes room for at least `needed` elements, keeping those held.
    package mutating func reserveCapacity(_ needed: Int) {
        guard needed > capacity else { return }
        let newBase = UnsafeMutablePointer<Element>.allocate(capacity: needed)
        newBase.initialize(from: base, count: count)
        base.deallocate()
        base = newBase
        capacity = needed
    }

    /// Forgets the elements, keeping the storage.
    package mutating func removeAll() {
        count = 0
    }

    /// Forgets the elements and, when the storage grew past `limit` elements, goes back to
    /// `capacity` (an idle connection gives back what one large head grew).
    package mutating func removeAll(shrinkingPast limit: Int, to capacity: Int) {
        count = 0
        guard self.capacity > limit else { return }
        base.deallocate()
        base = .allocate(capacity: capacity)
        self.capacity = capacity
    }
}

/// A head's raw bytes, gathered read by read, then copied out once.
package typealias ByteAccumulator = ScratchList<UInt8>

extension ScratchList where Element == UInt8 {
    /// The bytes held; valid until the next mutation.
    package var bytes: UnsafeBufferPointer<UInt8> { elements }
}
