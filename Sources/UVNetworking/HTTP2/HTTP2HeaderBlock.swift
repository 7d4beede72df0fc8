import UVHTTP1

/// A header block as bytes: every name and value back to back in one array, and where each
/// lies. Requests are translated into one and submitted from it, responses decoded into one and
/// handed on as `ReceivedFields`, with no String per field: a String per name and value cost
/// more than the rest of a small request did.
struct HTTP2HeaderBlock {
    private(set) var bytes: [UInt8] = []
    private(set) var bounds: [ReceivedFields.Bounds] = []

    init() {}

    /// A block of these fields, in order (tests, the fuzz harness).
    init(_ fields: [(name: String, value: String)]) {
        for field in fields {
            Array(field.name.utf8).withUnsafeBufferPointer { name in
                Array(field.value.utf8).withUnsafeBufferPointer { append(name: name, value: $0) }
            }
        }
    }

    /// Empties the block, keeping its storage for the next one.
    mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        bounds.removeAll(keepingCapacity: true)
    }

    var count: Int { bounds.count }

    mutating func append(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) {
        let nameStart = bytes.count
        bytes.append(contentsOf: name)
        appendValue(value, nameStart: nameStart)
    }

    mutating func append(name: StaticString, value: UnsafeBufferPointer<UInt8>) {
        append(name: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount), value: value)
    }

    /// Appends `name` in lowercase (HTTP/2 field names are, RFC 9113 §8.2.1).
    mutating func append(lowercasing name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) {
        let nameStart = bytes.count
        bytes.append(contentsOf: name)
        bytes.withUnsafeMutableBufferPointer { all in
            for index in nameStart..<all.count where all[index] &- 0x41 < 26 { all[index] |= 0x20 }
        }
        appendValue(value, nameStart: nameStart)
    }

    private mutating func appendValue(_ value: UnsafeBufferPointer<UInt8>, nameStart: Int) {
        let valueStart = Int32(truncatingIfNeeded: bytes.count)
        bytes.append(contentsOf: value)
        bounds.append(.init(nameStart: Int32(truncatingIfNeeded: nameStart), nameEnd: valueStart, valueStart: valueStart,
                            valueEnd: Int32(truncatingIfNeeded: bytes.count)))
    }

    /// Moves the last field to `index` (a pseudo-field known only after the fields).
    mutating func moveLast(to index: Int) {
        guard let last = bounds.popLast() else { return }
        bounds.insert(last, at: index)
    }

    /// The fields as received fields (one array: the bytes, then the bounds).
    var receivedFields: ReceivedFields {
        bytes.withUnsafeBufferPointer { section in
            bounds.withUnsafeBufferPointer { ReceivedFields(section: section, extra: UnsafeBufferPointer(start: nil, count: 0), bounds: $0) }
        }
    }

    /// The fields as strings (tests, diagnostics).
    var fields: [(name: String, value: String)] {
        bounds.map { bound in
            (String(decoding: bytes[Int(bound.nameStart)..<Int(bound.nameEnd)], as: UTF8.self),
             String(decoding: bytes[Int(bound.valueStart)..<Int(bound.valueEnd)], as: UTF8.self))
        }
    }
}
