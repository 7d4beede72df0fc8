import Foundation

/// AFNetworking's default query-string encoding (`AFQueryStringFromParameters`), used for URL
/// queries and `application/x-www-form-urlencoded` bodies.
///
/// Parameters are flattened into (name, value) pairs:
/// - dictionaries (Swift or `NSDictionary`): keys in ascending order of their descriptions; a
///   nested dictionary gives `key[sub]`;
/// - arrays (Swift or `NSArray`): one `key[]` pair per element, no indices;
/// - sets (Swift or `NSSet`): elements in ascending order of their descriptions, each under the
///   key itself (no brackets);
/// - `NSNull` or nil: a bare `key` with no "=";
/// - anything else: its description. A Swift `Bool` gives "1" or "0", as AFNetworking's
///   `NSNumber` booleans do (not "true"/"false"). Other Swift numbers keep Swift's description,
///   so `1.0` gives "1.0".
///
/// Names and values are then percent-escaped and the pairs joined with "&".
public enum QueryString {
    /// The query string for `parameters`, e.g. `key=value&key1=value%26` for
    /// `["key": "value", "key1": "value&"]`. Empty when there are no pairs.
    public static func string(from parameters: Any) -> String {
        pairs(from: parameters).map { pair in
            let name = percentEscaped(pair.name)
            guard let value = pair.value else { return name }
            return name + "=" + percentEscaped(value)
        }.joined(separator: "&")
    }

    /// The flattened, unescaped pairs, in order; a nil value stands for `NSNull` or nil (a bare
    /// key). A multipart form builder sends these as its text fields.
    public static func pairs(from parameters: Any) -> [(name: String, value: String?)] {
        valuePairs(from: parameters).map { ($0.name, $0.value.map(text(of:))) }
    }

    /// The flattened pairs with each value as given (nil for `NSNull` or nil), for a caller that
    /// treats some values specially, as AFNetworking's multipart builder sends `Data` as is.
    public static func valuePairs(from parameters: Any) -> [(name: String, value: Any?)] {
        var result: [(name: String, value: Any?)] = []
        flatten(key: nil, value: parameters, into: &result)
        return result
    }

    /// `string` with every byte outside ALPHA, DIGIT, "-._~", "/" and "?" percent-encoded as
    /// UTF-8 with uppercase hex (AFPercentEscapedStringFromString). "/" and "?" stay because
    /// RFC 3986 §3.4 allows them in a query. Every byte of a non-ASCII scalar is escaped, so a
    /// character is never split.
    public static func percentEscaped(_ string: String) -> String {
        if string.utf8.allSatisfy(isUnescaped) { return string }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(string.utf8.count * 3)
        for byte in string.utf8 {
            if isUnescaped(byte) {
                bytes.append(byte)
            } else {
                bytes.append(UInt8(ascii: "%"))
                bytes.append(hexDigits[Int(byte >> 4)])
                bytes.append(hexDigits[Int(byte & 0x0F)])
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The text a value is sent as: "1"/"0" for a Swift `Bool`, else its description.
    static func text(of value: Any) -> String {
        // An exact type check: `as? Bool` would also match any NSNumber equal to 0 or 1.
        if type(of: value) == Bool.self, let flag = value as? Bool { return flag ? "1" : "0" }
        return String(describing: value)
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    private static func isUnescaped(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"),
             UInt8(ascii: "/"), UInt8(ascii: "?"):
            return true
        default:
            return false
        }
    }

    /// AFQueryStringPairsFromKeyAndValue. At the top level there is no key: a dictionary's keys
    /// stand alone, and other values get the empty name (AFNetworking would write "(null)").
    private static func flatten(key: String?, value: Any, into result: inout [(name: String, value: Any?)]) {
        // The common leaves first, by exact type: no cast at all.
        if isPlainLeaf(value) {
            result.append((key ?? "", value))
            return
        }
        // NSNull by its metatype: on Linux `value is NSNull` bridges a Swift value to its
        // Foundation twin before it can say no, and a dictionary or array is bridged whole, its
        // elements too, at every level of the tree.
        guard let value = unwrapped(value), !(type(of: value) is NSNull.Type) else {
            result.append((key ?? "", nil))
            return
        }
        // Dictionaries first, then arrays, then sets: the same order of checks as AFNetworking.
        if let dictionary = value as? [AnyHashable: Any] {
            let keys = dictionary.keys.map { (key: $0, name: text(of: $0.base)) }.sorted { $0.name < $1.name }
            for nested in keys {
                let name = key.map { "\($0)[\(nested.name)]" } ?? nested.name
                flatten(key: name, value: dictionary[nested.key] as Any, into: &result)
            }
        } else if let array = value as? [Any] {
            for element in array { flatten(key: (key ?? "") + "[]", value: element, into: &result) }
        } else if let set = value as? Set<AnyHashable> {
            let elements = set.map { (value: $0.base, name: text(of: $0.base)) }.sorted { $0.name < $1.name }
            for element in elements { flatten(key: key, value: element.value, into: &result) }
        } else {
            result.append((key ?? "", value))
        }
    }

    /// Whether `value` is a String, Int, Double or Bool itself (not in an Optional, not a
    /// subclass or a bridged object): sent as its text, and never a collection or NSNull.
    private static func isPlainLeaf(_ value: Any) -> Bool {
        let type = type(of: value)
        return type == String.self || type == Int.self || type == Double.self || type == Bool.self
    }

    /// The value inside any number of Optional layers, or nil when one of them is empty.
    private static func unwrapped(_ value: Any) -> Any? {
        guard let optional = value as? any OptionalValue else { return value }
        return optional.wrappedValue.flatMap(unwrapped)
    }
}

/// Lets an `Any` holding an Optional be looked into.
private protocol OptionalValue {
    var wrappedValue: Any? { get }
}

extension Optional: OptionalValue {
    fileprivate var wrappedValue: Any? { map { $0 } }
}
