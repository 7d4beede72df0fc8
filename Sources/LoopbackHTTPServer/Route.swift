/// What a request target asks for. The server's whole "application": it depends on the path
/// only, so every method gets the same answer.
enum Route: Equatable {
    /// `/items/N`: 200 with `ItemBody`.
    case item(Int)
    /// `/status/CODE` with CODE in 200...599: that status. 1xx codes are not final responses, so
    /// they are not offered.
    case status(Int)
    /// Anything else: 404.
    case notFound

    /// Digits accepted in N: 18 always fit in an Int.
    private static let maximumItemDigits = 18

    /// The route for a request target: origin-form (`/items/1?x`) or absolute-form
    /// (`http://host/items/1`, as sent to proxies). The query and fragment are ignored.
    static func match(_ target: UnsafeRawBufferPointer) -> Route {
        var path = target[...]
        if path.first != UInt8(ascii: "/") {
            // Absolute-form: skip "scheme://authority".
            guard let slashes = firstIndex(of: "//", in: path),
                  let start = path[(slashes + 2)...].firstIndex(of: UInt8(ascii: "/")) else { return .notFound }
            path = path[start...]
        }
        if let end = path.firstIndex(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) {
            path = path[..<end]
        }
        if let digits = suffix(of: path, after: "/items/") {
            guard digits.count <= maximumItemDigits, let item = decimal(digits) else { return .notFound }
            return .item(item)
        }
        if let digits = suffix(of: path, after: "/status/") {
            guard digits.count == 3, let code = decimal(digits), (200...599).contains(code) else { return .notFound }
            return .status(code)
        }
        return .notFound
    }

    /// The rest of `path` after `prefix`, if it starts with it.
    private static func suffix(of path: Slice<UnsafeRawBufferPointer>, after prefix: StaticString) -> Slice<UnsafeRawBufferPointer>? {
        let literal = UnsafeRawBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount)
        guard path.starts(with: literal) else { return nil }
        return path[(path.startIndex + literal.count)...]
    }

    /// The value of a non-empty run of ASCII digits, or nil.
    private static func decimal(_ digits: Slice<UnsafeRawBufferPointer>) -> Int? {
        guard !digits.isEmpty else { return nil }
        var value = 0
        for byte in digits {
            let digit = byte &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            value = value * 10 + Int(digit)
        }
        return value
    }

    /// Where `needle` (two bytes) first occurs in `bytes`.
    private static func firstIndex(of needle: StaticString, in bytes: Slice<UnsafeRawBufferPointer>) -> Int? {
        let first = needle.utf8Start[0], second = needle.utf8Start[1]
        var index = bytes.startIndex
        while index + 1 < bytes.endIndex {
            if bytes[index] == first && bytes[index + 1] == second { return index }
            index += 1
        }
        return nil
    }
}
