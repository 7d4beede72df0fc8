import Foundation

/// How HTTPSessionManager turns a base URL and the URL strings given to its verbs into request
/// URLs, as AFHTTPSessionManager does.
enum BaseURL {
    /// The base URL as requests resolve against it: a non-empty path gains a trailing "/", so
    /// "https://api.example.com/v1" and "https://api.example.com/v1/" both resolve "users" to
    /// ".../v1/users" (without the slash, RFC 3986 would replace "v1").
    /// The path is read as written (`path` drops a final "/"), not the whole URL: a query or
    /// fragment ending in "/" ("?next=/") says nothing about the path.
    static func normalized(_ url: URL) -> URL {
        let path = url.path(percentEncoded: true)
        guard !path.isEmpty, !path.hasSuffix("/") else { return url }
        return url.appendingPathComponent("")
    }

    /// `string` resolved against `base` by RFC 3986 (section 5.2): "foo" is base/foo, "/foo" is
    /// on the base's host, an absolute URL wins, queries and trailing slashes are kept. An empty
    /// string is the base itself without its fragment (§5.2.2; Foundation makes no URL from "").
    /// Nil when the result is not a URL.
    static func resolve(_ string: String, against base: URL?) -> URL? {
        guard let base else { return URL(string: string) }
        if string.isEmpty { return withoutFragment(base.absoluteURL) }
        return URL(string: string, relativeTo: base)?.absoluteURL
    }

    /// Cut at the first "#" (which only a fragment can hold unescaped): URLComponents would
    /// rewrite the rest, an empty port for one.
    private static func withoutFragment(_ url: URL) -> URL {
        let text = url.absoluteString
        guard let hash = text.firstIndex(of: "#") else { return url }
        return URL(string: String(text[..<hash])) ?? url
    }
}
