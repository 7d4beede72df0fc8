import Foundation
import HTTPTypes

/// What a private cache may store, and how a stored response changes (RFC 9111 §3, §4.3.4,
/// §4.4). Pure.
enum CacheStorePolicy {
    /// Whether a private cache may store the final response of `status` with `fields` to a
    /// request of `method` (§3): a GET; a status it understands that is not a partial or
    /// not-modified answer; no no-store on either side; and something that gives it a
    /// lifetime or a use — max-age, Expires, public, private, a heuristically cacheable
    /// status. `private` and an Authorization in the request bind only shared caches (§3.5):
    /// a private one stores them.
    static func mayStore(method: HTTPRequest.Method, status: Int, fields: HTTPFields,
                         response: CacheControl, request: CacheControl) -> Bool {
        guard method == .get, (200...599).contains(status), status != 206, status != 304 else { return false }
        guard !response.noStore, !request.noStore else { return false }
        // Vary: * can never be matched again (§4.1): storing it only takes room.
        if CacheVary.names(in: fields).contains("*") { return false }
        return response.maxAge != nil || response.invalidMaxAge || fields[.expires] != nil || response.isPublic
            || response.isPrivate || CacheFreshness.heuristicallyCacheable.contains(status)
    }

    /// Fields never stored, nor taken from a 304 (§3.1, §3.2): the connection's own, and
    /// Content-Length, which a 304 describes nothing of.
    private static let notUpdated: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "te", "transfer-encoding", "upgrade", "content-length",
    ]

    /// The stored response's fields once a 304 with `update` validated it (§4.3.4, §3.2):
    /// each field the 304 carries replaces the stored ones of its name, except the connection's
    /// own fields (and those its Connection field names) and Content-Length.
    static func fields(_ stored: HTTPFields, updatedBy update: HTTPFields) -> HTTPFields {
        var excluded = notUpdated
        for value in update[values: .connection] {
            for name in value.split(separator: ",") { excluded.insert(name.trimmingCharacters(in: .whitespaces).lowercased()) }
        }
        let replaced = Set(update.map { $0.name.canonicalName }).subtracting(excluded)
        var result = HTTPFields()
        for field in stored where !replaced.contains(field.name.canonicalName) { result.append(field) }
        for field in update where replaced.contains(field.name.canonicalName) { result.append(field) }
        return result
    }

    /// Whether a HEAD's 200 with `head` confirms a stored GET response with `stored` fields that
    /// the HEAD could have been answered with (§4.3.5): each validator the HEAD carries (ETag,
    /// Last-Modified) has the same value in the stored fields, and its Content-Length, if any,
    /// is the stored one. Then the stored response takes the HEAD's fields, as from a 304;
    /// otherwise the representation may have changed and the stored response is not to be
    /// used without the origin any more.
    static func headConfirms(_ head: HTTPFields, stored: HTTPFields) -> Bool {
        for name in [HTTPField.Name.eTag, .lastModified] {
            if let value = head[name], stored[name] != value { return false }
        }
        // A body stored decoded has the decoded length: the HEAD's describes the coded
        // representation, and is not compared.
        if let length = head[.contentLength], head[.contentEncoding] == stored[.contentEncoding] {
            func number(_ text: String?) -> Int? { text.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) } }
            return number(stored[.contentLength]) == number(length)
        }
        return true
    }

    /// The fields a response is stored with (§3.1): without the connection's own (and those
    /// its Connection field names), with the length of the body as stored, and without
    /// Content-Encoding when the body is stored decoded (`decoded`), as the caller was given it.
    static func storedFields(_ fields: HTTPFields, bodyLength: Int, decoded: Bool) -> HTTPFields {
        var excluded = notUpdated
        for value in fields[values: .connection] {
            for name in value.split(separator: ",") { excluded.insert(name.trimmingCharacters(in: .whitespaces).lowercased()) }
        }
        if decoded { excluded.insert("content-encoding") }
        var result = HTTPFields()
        for field in fields where !excluded.contains(field.name.canonicalName) { result.append(field) }
        result[.contentLength] = String(bodyLength)
        return result
    }

    /// The URLs a response to an unsafe request invalidates (§4.4): none for a safe method or
    /// an error status; else the target, and the URLs its Location and Content-Location name
    /// when they are of the same origin (another origin's entries are not this response's to
    /// invalidate).
    static func invalidatedURLs(method: HTTPRequest.Method, status: Int, target: URL, fields: HTTPFields) -> [URL] {
        let safe: Set<HTTPRequest.Method> = [.get, .head, .options, .trace]
        guard !safe.contains(method), (200...399).contains(status) else { return [] }
        var urls = [target]
        for name in [HTTPField.Name.location, HTTPField.Name.contentLocation] {
            guard let value = fields[name], let url = URL(string: value, relativeTo: target)?.absoluteURL,
                  CacheKey.sameOrigin(url, target) else { continue }
            urls.append(url)
        }
        return urls
    }
}

/// The key a cache files a response under: the request's URL without its fragment (RFC 9111
/// §2: the target URI; the method is GET for everything stored).
enum CacheKey {
    static func key(for url: URL) -> String {
        // Most URLs are their own key: taken apart and put together again (~16,000
        // instructions, for every lookup) they come out as they were.
        if url.baseURL == nil {
            let text = url.absoluteString
            if isKeyAsItIs(text) { return text }
        }
        return normalizedKey(for: url)
    }

    /// `key(for:)` the long way: the fragment dropped, scheme and host lowercased.
    static func normalizedKey(for url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else { return url.absoluteString }
        components.fragment = nil
        components.scheme = components.scheme?.lowercased()
        components.host = components.host?.lowercased()
        return components.string ?? url.absoluteString
    }

    /// Whether `text` (an absolute URL) is what `normalizedKey` makes of it: ASCII, no fragment,
    /// and a lowercase scheme and authority with nothing a rebuild could write otherwise
    /// (userinfo, percent-escapes, an IP literal's brackets).
    static func isKeyAsItIs(_ text: String) -> Bool {
        text.utf8.withContiguousStorageIfAvailable { bytes -> Bool in
            var index = 0
            // The scheme: lowercase letters, digits, + - . up to "://".
            while index < bytes.count, bytes[index] != UInt8(ascii: ":") {
                let byte = bytes[index]
                guard (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                        || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") else { return false }
                index += 1
            }
            guard index > 0, index + 2 < bytes.count, bytes[index + 1] == UInt8(ascii: "/"), bytes[index + 2] == UInt8(ascii: "/") else {
                return false
            }
            index += 3
            // The authority: a lowercase host, and a port of digits not starting with 0 (an
            // empty port or leading zeros may be written otherwise).
            var portDigits = -1
            while index < bytes.count, bytes[index] != UInt8(ascii: "/"), bytes[index] != UInt8(ascii: "?") {
                let byte = bytes[index]
                let isDigit = byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
                if portDigits >= 0 {
                    guard isDigit, portDigits > 0 || byte != UInt8(ascii: "0") else { return false }
                    portDigits += 1
                } else if byte == UInt8(ascii: ":") {
                    portDigits = 0
                } else {
                    guard (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || isDigit
                            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") else { return false }
                }
                index += 1
            }
            guard portDigits != 0 else { return false }
            // The rest: ASCII without a fragment.
            while index < bytes.count {
                guard bytes[index] < 0x80, bytes[index] != UInt8(ascii: "#") else { return false }
                index += 1
            }
            return true
        } ?? false
    }

    /// Whether two URLs share scheme, host and port (a missing port being the scheme's).
    static func sameOrigin(_ a: URL, _ b: URL) -> Bool {
        func port(_ url: URL) -> Int? { url.port ?? (url.scheme?.lowercased() == "https" ? 443 : url.scheme?.lowercased() == "http" ? 80 : nil) }
        return a.scheme?.lowercased() == b.scheme?.lowercased() && a.host?.lowercased() == b.host?.lowercased() && port(a) == port(b)
    }
}

/// Vary (RFC 9111 §4.1): the request fields a stored response was chosen by, kept with it, and
/// compared with a later request's.
enum CacheVary {
    /// The field names the response's Vary fields list, lowercased; "*" among them when one
    /// says any.
    static func names(in fields: HTTPFields) -> [String] {
        fields[values: .vary].flatMap { value in
            value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
        }
    }

    /// What `request` sends for each of `names`: its values joined as one list, whitespace
    /// around commas and at the ends dropped (§4.1's normalisation); nil when absent.
    static func selected(_ names: [String], from request: HTTPFields) -> [String: String?] {
        var result: [String: String?] = [:]
        for name in names where name != "*" {
            guard let fieldName = HTTPField.Name(name) else { result[name] = .some(nil); continue }
            let values = request[values: fieldName]
            result[name] = values.isEmpty ? .some(nil)
                : .some(values.flatMap { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }.joined(separator: ","))
        }
        return result
    }

    /// Whether a response stored with `storedNames` and the values its request sent
    /// (`storedValues`) may answer `request`: every named field the same, absent on both sides
    /// included; never when it varies on "*".
    static func matches(storedNames: [String], storedValues: [String: String?], request: HTTPFields) -> Bool {
        if storedNames.contains("*") { return false }
        return selected(storedNames, from: request) == storedValues
    }
}
