import HTTPTypes
import Instrumentation
import UVHTTP1

/// The fields a tracer injects for one task's span (W3C `traceparent` and `tracestate`, or
/// whatever it propagates), in the order it wrote them, as `HTTPFieldsInjector` would leave
/// them in an empty `HTTPFields`: a field of a name already written replaces it. The first is
/// kept inline, so that the usual lone `traceparent` costs no array and no `HTTPFields` storage.
///
/// Written only by `InjectedFieldsInjector`, which checks what it writes.
struct InjectedFields: Sendable, Sequence {
    /// The first field written; nil when none was.
    private(set) var first: (name: String, value: String)?
    /// The fields after the first (usually none).
    private(set) var others: [(name: String, value: String)] = []

    /// Sets `name` (a token) to `value` (a field value the encoder takes), replacing an earlier field of that name (ASCII case-insensitively).
    fileprivate mutating func set(_ name: String, _ value: String) {
        if first == nil {
            first = (name, value)
        } else if let current = first, RequestEncoder.sameName(current.name, name) {
            first = (name, value)
        } else if let index = others.firstIndex(where: { RequestEncoder.sameName($0.name, name) }) {
            others[index] = (name, value)
        } else {
            others.append((name, value))
        }
    }

    /// Whether a field of `name` was written.
    func contains(name: String) -> Bool {
        contains { RequestEncoder.sameName($0.name, name) }
    }

    /// The fields in the order they were first written.
    struct Iterator: IteratorProtocol {
        fileprivate let fields: InjectedFields
        fileprivate var index = -1

        mutating func next() -> (name: String, value: String)? {
            defer { index += 1 }
            // `others` is empty while `first` is nil.
            if index < 0 { return fields.first }
            return index < fields.others.count ? fields.others[index] : nil
        }
    }

    func makeIterator() -> Iterator { Iterator(fields: self) }
}

/// Writes a tracer's fields into `InjectedFields` with `HTTPFieldsInjector`'s rules: a key that
/// is not a field name is skipped, and a value goes through `HTTPField`'s legalizing (invalid
/// bytes become spaces, surrounding whitespace goes) unless it is plain visible ASCII, which
/// that leaves as it is. So every name written is a token and every value one the encoder
/// takes, which `PreparedRequest.adding` relies on.
struct InjectedFieldsInjector: Injector {
    func inject(_ value: String, forKey key: String, into fields: inout InjectedFields) {
        // W3C's names, compared as the small strings they are, need no byte-by-byte check.
        guard key == TaskTrace.traceparent || key == TaskTrace.tracestate || Self.isToken(key) else { return }
        if Self.isVisibleASCII(value) {
            fields.set(key, value)
        } else if let name = HTTPField.Name(key) {
            fields.set(key, HTTPField(name: name, value: value).value)
        }
    }

    // Both checks run per task over a `traceparent`: loops over the bytes, where
    // `RequestEncoder.all` would call a test function per byte.

    /// A non-empty tchar string (RFC 9110 §5.6.2).
    static func isToken(_ text: String) -> Bool {
        var text = text
        return !text.isEmpty && text.withUTF8 { bytes in
            for byte in bytes {
                switch byte {
                case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, 0x21, 0x23...0x27, 0x2A, 0x2B, 0x2D, 0x2E, 0x5E...0x60, 0x7C, 0x7E:
                    continue
                default:
                    return false
                }
            }
            return true
        }
    }

    /// Non-empty and only visible ASCII (0x21-0x7E): what `HTTPField` keeps as it is. Eight
    /// bytes at a time: a `traceparent` is 55.
    static func isVisibleASCII(_ text: String) -> Bool {
        var text = text
        return !text.isEmpty && text.withUTF8 { bytes in
            let ones: UInt64 = 0x0101_0101_0101_0101
            let highs: UInt64 = 0x8080_8080_8080_8080
            var index = 0
            while index + 8 <= bytes.count {
                let word = UnsafeRawPointer(bytes.baseAddress! + index).loadUnaligned(as: UInt64.self)
                // A byte below 0x21, or above 0x7E (0x7F or more), sets its high bit in one of
                // these (the usual "has a byte less than / more than n" tests, exact for n < 128).
                let below = (word &- ones &* 0x21) & ~word & highs
                let above = ((word &+ ones &* (0x7F - 0x7E)) | word) & highs
                if below | above != 0 { return false }
                index += 8
            }
            while index < bytes.count {
                if bytes[index] <= 0x20 || bytes[index] >= 0x7F { return false }
                index += 1
            }
            return true
        }
    }
}
