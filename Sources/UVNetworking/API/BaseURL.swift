import Foundation

/// How HTTPSessionManager turns a base URL and the URL strings given to its verbs into request
/// URLs, as AFHTTPSessionManager does.
enum BaseURL {
    /// The base URL as requests resolve against it: a non-empty path gains a trailing "/", so
    /// "https://api.example.com/v1" and "https://api.example.com/v1/" both resolve "users" to
    /// ".../v1/users" (without the slash, RFC 3986 would replace "v1").
    static func normalized(_ url: URL) -> URL {
        guard !url.path.isEmpty, !url.absoluteString.hasSuffix("/") else { return url }
        return url.appendingPathComponent("")
    }

    /// `string` resolved against `base` by RFC 3986 (section 5.2): "foo" is base/foo, "/foo" is
    /// on the base's host, an absolute URL wins, queries and trailing slashes are kept. An empty
    /// string is the base itself. Nil when the result is not a URL.
    static func resolve(_ string: String, against base: URL?) -> URL? {
        guard let base else { return URL(string: string) }
        if string.isEmpty { return base }
        return URL(string: string, relativeTo: base)?.absoluteURL
    }
}
