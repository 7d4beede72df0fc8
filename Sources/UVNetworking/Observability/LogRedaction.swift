import Foundation

/// What of a request may appear in a log line: never a credential.
enum LogRedaction {
    /// `url` without its user and password (the rest, query included, as written).
    static func url(_ url: URL) -> String {
        guard url.user != nil || url.password != nil,
              var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url.absoluteString }
        components.user = nil
        components.password = nil
        return components.string ?? "<url>"
    }
}

extension LogRedaction {
    /// `text`, a URL as a server or caller wrote it (it may not parse), without any user and
    /// password: what precedes the last "@" of its authority is cut. For error details, which
    /// reach log lines and spans (`recordError`).
    static func urlText(_ text: String) -> String {
        let start = text.range(of: "//")?.upperBound ?? text.startIndex
        let end = text[start...].firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? text.endIndex
        guard let at = text[start..<end].lastIndex(of: "@") else { return text }
        return String(text[..<start]) + text[text.index(after: at)...]
    }
}
