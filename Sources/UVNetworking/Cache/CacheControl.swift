import Foundation
import HTTPTypes

/// The Cache-Control directives of a request or a response (RFC 9111 §5.2), parsed once.
///
/// All the message's Cache-Control fields count, as one comma-separated list. Names are matched
/// without regard to case; a value may be a token or a quoted string. When a directive appears
/// more than once its first occurrence counts (§4.2.1 allows the first, or taking the response
/// as stale). A delta-seconds value (max-age, max-stale, min-fresh) that is not a string of
/// digits makes the directive invalid: for a response's max-age the response is then stale, as
/// wpt's freshness scenarios expect; a value past 2^31 is 2^31 (§1.2.2). Directives this cache
/// has no use for (s-maxage, proxy-revalidate, public's shared-cache meaning aside) are kept as
/// names only, so a caller can still see they were there.
struct CacheControl: Equatable, Sendable {
    /// max-age: seconds; `invalidMaxAge` when the directive was there with a value that is not
    /// delta-seconds.
    var maxAge: Int?
    var invalidMaxAge = false
    /// no-cache, with or without field names (a private cache revalidates either way).
    var noCache = false
    var noStore = false
    var mustRevalidate = false
    var isPublic = false
    var isPrivate = false
    var immutable = false
    /// Request only: max-stale. `.some(nil)` for max-stale without a value: any staleness.
    var maxStale: Int??
    var minFresh: Int?
    var onlyIfCached = false

    /// Pragma (RFC 9111 §5.4), which swift-http-types does not name.
    private static let pragma = HTTPField.Name("Pragma")!

    /// The largest delta-seconds kept (RFC 9111 §1.2.2).
    static let deltaSecondsCeiling = 2_147_483_648

    init() {}

    /// The directives of `fields`' Cache-Control fields; for a request without any, a
    /// `Pragma: no-cache` counts as `no-cache` (RFC 9111 §5.4 lets a cache do so).
    init(_ fields: HTTPFields, isRequest: Bool = false) {
        var seen = Set<String>()
        let values = fields[values: .cacheControl]
        for value in values {
            for directive in Self.directives(value) where seen.insert(directive.name).inserted {
                apply(directive.name, directive.argument)
            }
        }
        if isRequest, values.isEmpty, let pragma = fields[Self.pragma],
           pragma.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces).lowercased() == "no-cache" }) {
            noCache = true
        }
    }

    private mutating func apply(_ name: String, _ argument: String?) {
        switch name {
        case "max-age":
            maxAge = argument.flatMap(Self.deltaSeconds)
            invalidMaxAge = maxAge == nil
        case "no-cache": noCache = true
        case "no-store": noStore = true
        case "must-revalidate": mustRevalidate = true
        case "public": isPublic = true
        case "private": isPrivate = true
        case "immutable": immutable = true
        case "max-stale":
            // Without a value: a stale response of any age will do (§5.2.1.2).
            if let argument { maxStale = .some(Self.deltaSeconds(argument) ?? 0) } else { maxStale = .some(nil) }
        case "min-fresh": minFresh = argument.flatMap(Self.deltaSeconds)
        case "only-if-cached": onlyIfCached = true
        default: break
        }
    }

    /// delta-seconds (RFC 9111 §1.2.2): digits only, capped at 2^31.
    static func deltaSeconds(_ text: String) -> Int? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        return min(Int(text.prefix(12)) ?? deltaSecondsCeiling, deltaSecondsCeiling)
    }

    /// The directives of one field value: `name[=token|"quoted"]`, comma-separated; names
    /// lowercased, a quoted argument unescaped. Commas inside quotes do not split.
    static func directives(_ value: String) -> [(name: String, argument: String?)] {
        var result: [(name: String, argument: String?)] = []
        var index = value.startIndex
        func skipSpaces() {
            while index < value.endIndex, value[index] == " " || value[index] == "\t" { index = value.index(after: index) }
        }
        while index < value.endIndex {
            skipSpaces()
            var name = ""
            while index < value.endIndex, value[index] != "=", value[index] != "," {
                name.append(value[index])
                index = value.index(after: index)
            }
            var argument: String?
            if index < value.endIndex, value[index] == "=" {
                index = value.index(after: index)
                skipSpaces()
                var text = ""
                if index < value.endIndex, value[index] == "\"" {
                    index = value.index(after: index)
                    while index < value.endIndex, value[index] != "\"" {
                        if value[index] == "\\", value.index(after: index) < value.endIndex { index = value.index(after: index) }
                        text.append(value[index])
                        index = value.index(after: index)
                    }
                    if index < value.endIndex { index = value.index(after: index) }
                    // Whatever follows a closing quote up to the next comma is not part of it.
                    while index < value.endIndex, value[index] != "," { index = value.index(after: index) }
                } else {
                    while index < value.endIndex, value[index] != "," {
                        text.append(value[index])
                        index = value.index(after: index)
                    }
                    text = text.trimmingCharacters(in: .whitespaces)
                }
                argument = text
            }
            if index < value.endIndex { index = value.index(after: index) }
            let trimmed = name.trimmingCharacters(in: .whitespaces).lowercased()
            if !trimmed.isEmpty { result.append((trimmed, argument)) }
        }
        return result
    }
}
