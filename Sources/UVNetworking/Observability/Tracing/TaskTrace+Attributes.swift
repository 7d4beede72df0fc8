import Foundation

/// The OpenTelemetry semantic-convention values of a task's span that need more than a copy.
extension TaskTrace {
    /// `url.full`: the URL as sent, with any user and password replaced by "REDACTED", as the
    /// conventions ask (`https://REDACTED:REDACTED@host/`): a span is exported far and kept
    /// long, so a credential must never reach one.
    static func fullURL(_ url: URL) -> String {
        guard url.user(percentEncoded: true) != nil || url.password(percentEncoded: true) != nil,
              var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            return url.absoluteString
        }
        components.percentEncodedUser = "REDACTED"
        components.percentEncodedPassword = "REDACTED"
        // Should the components not rebuild a URL, nothing of the original goes out.
        return components.string ?? "REDACTED"
    }

    /// `server.port`: the URL's port, or its scheme's default.
    static func port(of url: URL) -> Int {
        if let port = url.port { return port }
        return url.scheme?.lowercased() == "https" ? 443 : 80
    }

    /// `error.type`: a low-cardinality name for why the task failed, the library's code name
    /// (`cannotConnectToHost`, `cancelled`, `timedOut`...), or the error's type for others.
    static func errorType(_ error: any Error) -> String {
        if let error = error as? NetworkingError { return error.code.description }
        return String(describing: type(of: error))
    }
}
