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
