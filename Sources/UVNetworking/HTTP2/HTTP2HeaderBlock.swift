import UVHTTP1

/// A header block as bytes: every name and value back to back in one buffer, and where each
/// lies. Requests are translated into one and submitted from it, responses decoded into one and
/// handed on as `ReceivedFields`, with no String per field: a String per name and value cost
/// more than the rest of a small request did. A class, reused from block to block by its
/// session: its buffer is our own rather than an array, because appending a name or a value is
/// the hot step (a dozen per response) and an array's generic append cost three times a copy.
final class HTTP2HeaderBlock {
    // Unchecked: loop-confined like its session, and the checks cost more than the appends.
    @exclusivity(unchecked) private var storage: UnsafeMutablePointer<UInt8>
    @exclusivity(unchecked) private var capacity: Int
    @exclusivity(unchecked) private var used = 0
    // The fields' bounds, as `storage` our own buffer: an array's append checked its
    // uniqueness and capacity through generic code, a third of a response's block.
    @exclusivity(unchecked) private var fieldBounds: UnsafeMutablePointer<ReceivedFields.Bounds>
    @exclusivity(unchecked) private var boundsCapacity: Int
    /// How many fields the block has.
    @exclusivity(unchecked) private(set) var count = 0
    /// Where the first `content-length` and `date` fields are, noted as they are appended: a
    /// response's stream needs both, and a search of the finished block cost more than the note.
    @exclusivity(unchecked) private(set) var known = KnownFields()

    /// Indices of fields a response head is read for (-1: absent).
    struct KnownFields {
        var contentLength = -1
        var date = -1
    }

    init() {
        capacity = 512
        storage = .allocate(capacity: capacity)
        boundsCapacity = 16
        fieldBounds = .allocate(capacity: boundsCapacity)
    }

    /// A block of these fields, in order (tests, the fuzz harness).
    convenience init(_ fields: [(name: String, value: String)]) {
        self.init()
        for field in fields {
            Array(field.name.utf8).withUnsafeBufferPointer { name in
                Array(field.value.utf8).withUnsafeBufferPointer { append(name: name, value: $0) }
            }
        }
    }

    deinit {
        storage.deallocate()
        fieldBounds.deallocate()
    }

    /// The names and values, back to back, valid until the block changes.
    var bytes: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: storage, count: used) }

    /// Where each field's name and value lie in `bytes`, valid until the block changes.
    var bounds: UnsafeBufferPointer<ReceivedFields.Bounds> { UnsafeBufferPointer(start: fieldBounds, count: count) }

    /// Empties the block, keeping its storage for the next one.
    func removeAll() {
        used = 0
        count = 0
        known = KnownFields()
    }

    func append(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) {
        // Names as received: lowercase, or the stream is malformed (nghttp2 refuses it first).
        if name.count == 14 && known.contentLength < 0 && Self.named(name, "content-length") {
            known.contentLength = count
        } else if name.count == 4 && known.date < 0 && Self.named(name, "date") {
            known.date = count
        }
        let nameStart = used
        appendBytes(name)
        appendValue(value, nameStart: nameStart)
    }

    func append(name: StaticString, value: UnsafeBufferPointer<UInt8>) {
        append(name: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount), value: value)
    }

    /// Appends `name` in lowercase (HTTP/2 field names are, RFC 9113 §8.2.1).
    func append(lowercasing name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) {
        let nameStart = used
        appendBytes(name)
        for index in nameStart..<used where storage[index] &- 0x41 < 26 { storage[index] |= 0x20 }
        appendValue(value, nameStart: nameStart)
    }

    private func appendValue(_ value: UnsafeBufferPointer<UInt8>, nameStart: Int) {
        let valueStart = Int32(truncatingIfNeeded: used)
        appendBytes(value)
        if count == boundsCapacity { growBounds() }
        fieldBounds[count] = ReceivedFields.Bounds(nameStart: Int32(truncatingIfNeeded: nameStart), nameEnd: valueStart,
                                                   valueStart: valueStart, valueEnd: Int32(truncatingIfNeeded: used))
        count += 1
    }

    private func appendBytes(_ source: UnsafeBufferPointer<UInt8>) {
        guard let base = source.baseAddress, source.count > 0 else { return }
        if used + source.count > capacity { grow(toAtLeast: used + source.count) }
        (storage + used).update(from: base, count: source.count)
        used += source.count
    }

    private func growBounds() {
        let moved = UnsafeMutablePointer<ReceivedFields.Bounds>.allocate(capacity: boundsCapacity * 2)
        moved.initialize(from: fieldBounds, count: count)
        fieldBounds.deallocate()
        fieldBounds = moved
        boundsCapacity *= 2
    }

    private func grow(toAtLeast needed: Int) {
        let larger = max(needed, capacity * 2)
        let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: larger)
        moved.update(from: storage, count: used)
        storage.deallocate()
        storage = moved
        capacity = larger
    }

    /// Whether `name` is `wanted`, byte for byte (as long: the caller checked).
    @inline(__always)
    private static func named(_ name: UnsafeBufferPointer<UInt8>, _ wanted: StaticString) -> Bool {
        memcmpBytes(name.baseAddress!, wanted.utf8Start, wanted.utf8CodeUnitCount)
    }

    /// Moves the last field to `index` (a pseudo-field known only after the fields).
    func moveLast(to index: Int) {
        guard count > 0, index < count else { return }
        let last = fieldBounds[count - 1]
        // Overlapping: update(from:count:) moves like memmove.
        (fieldBounds + index + 1).update(from: fieldBounds + index, count: count - 1 - index)
        fieldBounds[index] = last
        known.contentLength = Self.index(known.contentLength, afterMoving: count - 1, to: index)
        known.date = Self.index(known.date, afterMoving: count - 1, to: index)
    }

    /// Where the field at `old` is once the field at `from` moved to `to` (`to` <= `from`).
    private static func index(_ old: Int, afterMoving from: Int, to: Int) -> Int {
        if old == from { return to }
        return old >= to && old < from ? old + 1 : old
    }

    /// The fields as received fields (one array: the bytes, then the bounds).
    var receivedFields: ReceivedFields {
        ReceivedFields(section: bytes, extra: UnsafeBufferPointer(start: nil, count: 0), bounds: bounds)
    }

    /// The fields as strings (tests, diagnostics).
    var fields: [(name: String, value: String)] {
        bounds.map { bound in
            (String(decoding: UnsafeBufferPointer(rebasing: bytes[Int(bound.nameStart)..<Int(bound.nameEnd)]), as: UTF8.self),
             String(decoding: UnsafeBufferPointer(rebasing: bytes[Int(bound.valueStart)..<Int(bound.valueEnd)]), as: UTF8.self))
        }
    }
}
