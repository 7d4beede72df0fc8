// A received field section kept as the bytes it arrived in. Only the standard library is used
// here so that the fuzz harness can compile the decoder's files alone.

/// One header or trailer field as received (obs-fold already replaced by a space).
///
/// The name keeps the peer's spelling (compare it case-insensitively). The value has its leading
/// and trailing whitespace removed. Both are decoded as UTF-8; a byte that is not valid UTF-8
/// (obs-text) becomes U+FFFD, which is why a field must never be re-serialised from this form.
public struct HeaderField: Equatable, Sendable {
    /// The name, as the peer spelled it.
    public var name: String
    /// The value, without leading and trailing whitespace.
    public var value: String

    /// A field of this name and value.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// A field section (a head's fields, or trailers) as received, kept as bytes.
///
/// One byte array holds everything: the section's raw bytes as they came off the wire (the
/// decoder copies them once, while scanning them), then the values that obs-fold made
/// non-contiguous, then the bounds of each field's name and value. One allocation per section
/// however many fields it has, and no String is made on the loop thread: strings are made where
/// they are needed, off the loop (see `ResponseHead.httpResponse`), or by the `HeaderField` view
/// for tests.
public struct ReceivedFields: RandomAccessCollection, ExpressibleByArrayLiteral, Equatable, Sendable {
    /// Where one field's name and value lie in `storage`.
    package struct Bounds: Equatable, Sendable, BitwiseCopyable {
        package var nameStart: Int32
        package var nameEnd: Int32
        package var valueStart: Int32
        package var valueEnd: Int32

        package init(nameStart: Int32, nameEnd: Int32, valueStart: Int32, valueEnd: Int32) {
            self.nameStart = nameStart
            self.nameEnd = nameEnd
            self.valueStart = valueStart
            self.valueEnd = valueEnd
        }
    }

    /// The section's bytes, then `bounds` (16 bytes a field) from `boundsOffset` on.
    package private(set) var storage: [UInt8]
    /// Where the bounds start in `storage`; the bytes before it are the section's.
    package private(set) var boundsOffset: Int
    /// The raw section's length (the bytes after it, up to `boundsOffset`, hold folded values).
    package private(set) var sectionByteCount: Int
    /// Number of fields.
    public let count: Int

    /// No field.
    public init() {
        storage = []
        boundsOffset = 0
        sectionByteCount = 0
        count = 0
    }

    /// Copies a section's bytes (`section`, then `extra` bytes of folded values) and the bounds
    /// of its fields into one array.
    package init(section: UnsafeBufferPointer<UInt8>, extra: UnsafeBufferPointer<UInt8>, bounds: UnsafeBufferPointer<Bounds>) {
        let byteCount = section.count + extra.count
        let offset = (byteCount + 3) & ~3
        let total = offset + bounds.count * MemoryLayout<Bounds>.stride
        // reserveCapacity and appends, not init(unsafeUninitializedCapacity:): that one allocates
        // through the standard library's unspecialized code, which looks the array's storage
        // type up at run time (about 350 instructions per head); these are specialized here.
        var storage: [UInt8] = []
        storage.reserveCapacity(total)
        storage.append(contentsOf: section)
        if !extra.isEmpty { storage.append(contentsOf: extra) }
        for _ in byteCount..<offset { storage.append(0) }
        storage.append(contentsOf: UnsafeRawBufferPointer(bounds))
        self.storage = storage
        boundsOffset = offset
        sectionByteCount = section.count
        count = bounds.count
    }

    /// Writes `bytes` over the section's bytes in `range` (a value of the same length: the line
    /// structure and the bounds stay as they are, see `HeadReplay`). Copy-on-write: storage shared
    /// with another value is copied first, so no other value ever sees the change.
    package mutating func overwriteSection(_ range: Range<Int>, with bytes: UnsafeRawPointer) {
        precondition(range.upperBound <= sectionByteCount, "overwrite beyond the section")
        guard !range.isEmpty else { return }
        storage.withUnsafeMutableBytes { ($0.baseAddress! + range.lowerBound).copyMemory(from: bytes, byteCount: range.count) }
    }

    /// Fields given as bytes and bounds (tests).
    package init(bytes: [UInt8], bounds: [Bounds]) {
        self = bytes.withUnsafeBufferPointer { section in
            bounds.withUnsafeBufferPointer { ReceivedFields(section: section, extra: UnsafeBufferPointer(start: nil, count: 0), bounds: $0) }
        }
    }

    /// Fields given as strings (as an encoder takes them, tests, the fuzz harness's expectations).
    public init(_ fields: some Sequence<HeaderField>) {
        var bytes: [UInt8] = []
        var bounds: [Bounds] = []
        for field in fields {
            let nameStart = Int32(bytes.count)
            bytes += field.name.utf8
            let nameEnd = Int32(bytes.count)
            bytes += field.value.utf8
            bounds.append(Bounds(nameStart: nameStart, nameEnd: nameEnd, valueStart: nameEnd, valueEnd: Int32(bytes.count)))
        }
        self.init(bytes: bytes, bounds: bounds)
    }

    /// These fields and one more at the end: the bytes and bounds copied once, the new field's
    /// bytes after them (where folded values go). The section stays the received one.
    package func appending(name: String, value: String) -> ReceivedFields {
        let nameBytes = name.utf8, valueBytes = value.utf8
        let nameStart = boundsOffset, nameEnd = nameStart + nameBytes.count, valueEnd = nameEnd + valueBytes.count
        let offset = (valueEnd + 3) & ~3
        var bytes: [UInt8] = []
        bytes.reserveCapacity(offset + (count + 1) * MemoryLayout<Bounds>.stride)
        storage.withUnsafeBufferPointer { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: $0[..<boundsOffset])) }
        bytes.append(contentsOf: nameBytes)
        bytes.append(contentsOf: valueBytes)
        for _ in valueEnd..<offset { bytes.append(0) }
        storage.withUnsafeBufferPointer { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: $0[boundsOffset...])) }
        let added = Bounds(nameStart: Int32(nameStart), nameEnd: Int32(nameEnd), valueStart: Int32(nameEnd), valueEnd: Int32(valueEnd))
        withUnsafeBytes(of: added) { bytes.append(contentsOf: $0) }
        return ReceivedFields(storage: bytes, boundsOffset: offset, sectionByteCount: sectionByteCount, count: count + 1)
    }

    private init(storage: [UInt8], boundsOffset: Int, sectionByteCount: Int, count: Int) {
        self.storage = storage
        self.boundsOffset = boundsOffset
        self.sectionByteCount = sectionByteCount
        self.count = count
    }

    /// Fields given as a list of name-value pairs.
    public init(arrayLiteral fields: HeaderField...) {
        self.init(fields)
    }

    /// 0.
    public var startIndex: Int { 0 }
    /// `count`.
    public var endIndex: Int { count }

    /// The bounds of the field at `index`.
    package func bounds(at index: Int) -> Bounds {
        precondition(index >= 0 && index < count, "field index out of range")
        return storage.withUnsafeBytes {
            $0.loadUnaligned(fromByteOffset: boundsOffset + index * MemoryLayout<Bounds>.stride, as: Bounds.self)
        }
    }

    /// Where the value of the field at `index` lies in the storage (inside the raw section unless
    /// an obs-fold moved it after it).
    package func valueRange(at index: Int) -> Range<Int> {
        let field = bounds(at: index)
        return Int(field.valueStart)..<Int(field.valueEnd)
    }

    /// The field at `index`, decoded as UTF-8 (invalid bytes become U+FFFD).
    public subscript(index: Int) -> HeaderField {
        withField(at: index) { name, value in
            HeaderField(name: String(decoding: name, as: UTF8.self), value: String(decoding: value, as: UTF8.self))
        }
    }

    /// The index of the first field named `lowercaseName`, compared ASCII case-insensitively on
    /// the raw bytes: no String is made, nothing is allocated.
    package func firstIndex(named lowercaseName: StaticString) -> Int? {
        storage.withUnsafeBytes { raw in
            let all = raw.assumingMemoryBound(to: UInt8.self)
            for index in 0..<count {
                let field = raw.loadUnaligned(fromByteOffset: boundsOffset + index * MemoryLayout<Bounds>.stride, as: Bounds.self)
                let name = UnsafeBufferPointer(rebasing: all[Int(field.nameStart)..<Int(field.nameEnd)])
                if DecoderASCII.equalsLowercase(name, lowercaseName) { return index }
            }
            return nil
        }
    }

    /// Whether a field is named `lowercaseName` (ASCII case-insensitively).
    package func contains(lowercaseName: StaticString) -> Bool {
        firstIndex(named: lowercaseName) != nil
    }

    /// The value of the first field named `lowercaseName` (ASCII case-insensitively), or nil.
    package func firstValue(named lowercaseName: StaticString) -> String? {
        guard let index = firstIndex(named: lowercaseName) else { return nil }
        return withField(at: index) { _, value in String(decoding: value, as: UTF8.self) }
    }

    /// Calls `body` with the raw name and value of the field at `index`.
    public func withField<Result>(at index: Int, _ body: (_ name: UnsafeBufferPointer<UInt8>, _ value: UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        let field = bounds(at: index)
        return try storage.withUnsafeBufferPointer { all in
            try body(UnsafeBufferPointer(rebasing: all[Int(field.nameStart)..<Int(field.nameEnd)]),
                     UnsafeBufferPointer(rebasing: all[Int(field.valueStart)..<Int(field.valueEnd)]))
        }
    }

    /// Calls `body` with the raw section bytes (as received, obs-folds included).
    public func withSectionBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        try storage.withUnsafeBufferPointer { try body(UnsafeBufferPointer(rebasing: $0[..<sectionByteCount])) }
    }

    /// Equal when the fields' names and values are equal byte for byte, in order.
    public static func == (lhs: ReceivedFields, rhs: ReceivedFields) -> Bool {
        guard lhs.count == rhs.count else { return false }
        for index in 0..<lhs.count {
            let equal = lhs.withField(at: index) { leftName, leftValue in
                rhs.withField(at: index) { rightName, rightValue in
                    leftName.elementsEqual(rightName) && leftValue.elementsEqual(rightValue)
                }
            }
            if !equal { return false }
        }
        return true
    }
}
