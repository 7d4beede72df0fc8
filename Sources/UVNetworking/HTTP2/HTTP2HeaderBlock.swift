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
    @exclusivity(unchecked) private(set) var bounds: [ReceivedFields.Bounds] = []

    init() {
        capacity = 512
        storage = .allocate(capacity: capacity)
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

    deinit { storage.deallocate() }

    /// The names and values, back to back, valid until the block changes.
    var bytes: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: storage, count: used) }

    /// Empties the block, keeping its storage for the next one.
    func removeAll() {
        used = 0
        bounds.removeAll(keepingCapacity: true)
    }

    var count: Int { bounds.count }

    func append(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) {
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
        bounds.append(.init(nameStart: Int32(truncatingIfNeeded: nameStart), nameEnd: valueStart, valueStart: valueStart,
                            valueEnd: Int32(truncatingIfNeeded: used)))
    }

    private func appendBytes(_ source: UnsafeBufferPointer<UInt8>) {
        guard let base = source.baseAddress, source.count > 0 else { return }
        if used + source.count > capacity { grow(toAtLeast: used + source.count) }
        (storage + used).update(from: base, count: source.count)
        used += source.count
    }

    private func grow(toAtLeast needed: Int) {
        let larger = max(needed, capacity * 2)
        let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: larger)
        moved.update(from: storage, count: used)
        storage.deallocate()
        storage = moved
        capacity = larger
    }

    /// Moves the last field to `index` (a pseudo-field known only after the fields).
    func moveLast(to index: Int) {
        guard let last = bounds.popLast() else { return }
        bounds.insert(last, at: index)
    }

    /// The fields as received fields (one array: the bytes, then the bounds).
    var receivedFields: ReceivedFields {
        bounds.withUnsafeBufferPointer { ReceivedFields(section: bytes, extra: UnsafeBufferPointer(start: nil, count: 0), bounds: $0) }
    }

    /// The fields as strings (tests, diagnostics).
    var fields: [(name: String, value: String)] {
        bounds.map { bound in
            (String(decoding: UnsafeBufferPointer(rebasing: bytes[Int(bound.nameStart)..<Int(bound.nameEnd)]), as: UTF8.self),
             String(decoding: UnsafeBufferPointer(rebasing: bytes[Int(bound.valueStart)..<Int(bound.valueEnd)]), as: UTF8.self))
        }
    }
}
