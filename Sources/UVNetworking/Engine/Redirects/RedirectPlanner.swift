import Foundation
import HTTPTypes

/// Turns a redirect response into the next request, by RFC 9110 §15.4 and what browsers and
/// URLSession do where the RFC leaves room. A pure function of its inputs, so it is tested without
/// a server; the runner calls it on a worker thread.
enum RedirectPlanner {
    /// Whether a session follows responses with this status (a switch: this runs for every
    /// response head, on the loop).
    static func isRedirect(_ status: Int) -> Bool {
        switch status {
        case 301, 302, 303, 307, 308: return true
        default: return false
        }
    }

    /// Whether a response with `status` and `location` (its first Location field, if any) is
    /// a redirect to follow: a redirect status and a Location that names something. An empty or
    /// blank Location names nothing, so such a response is the task's response, as one without
    /// Location is (RFC 9110 §15.4 makes the field a SHOULD).
    static func isRedirectToFollow(status: Int, location: String?) -> Bool {
        guard isRedirect(status), let location else { return false }
        return location.utf8.contains { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }
    }

    /// What the session allows; from `SessionConfiguration`.
    struct Limits: Sendable {
        var maximumRedirects: Int
        var allowsHTTPSToHTTP: Bool
    }

    /// A request the task already sent (counted against the limit).
    struct Visit: Hashable, Sendable {
        var method: HTTPRequest.Method
        var url: String
    }

    /// The request that follows `response` to `request`, or why there is none.
    ///
    /// A URL already visited is followed again: servers set a cookie and redirect to the same
    /// URL, or bounce through a login, and curl and browsers follow; only
    /// `Limits.maximumRedirects` ends a loop (`tooManyRedirects`). `redirectCycle` is never
    /// raised.
    ///
    /// - Parameters:
    ///   - visited: every request of the task so far, the current one included.
    static func nextRequest(after request: Request, status: Int, location: String?, visited: [Visit],
                            limits: Limits) -> Result<Request, NetworkingError> {
        let from = request.url
        guard let location, !location.isEmpty else {
            return .failure(NetworkingError(.malformedResponse, "a \(status) redirect without a Location field", failingURL: from))
        }
        // RFC 9110 §10.2.2: a relative reference resolves against the request's URL.
        guard var target = URL(string: location, relativeTo: from)?.absoluteURL, target.host != nil else {
            return .failure(NetworkingError(.invalidURL, "the redirect's Location \"\(LogRedaction.urlText(location))\" is not a URL", failingURL: from))
        }
        guard let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            return .failure(NetworkingError(.unsupportedURL, "a redirect to \"\(LogRedaction.urlText(location))\", which is not http or https", failingURL: from))
        }
        if from.scheme?.lowercased() == "https" && scheme == "http" && !limits.allowsHTTPSToHTTP {
            return .failure(NetworkingError(.insecureRedirect, "a redirect from https to \(LogRedaction.url(target)) was refused: it would send the request in clear", failingURL: from))
        }
        // RFC 9110 §10.2.2: a Location without a fragment keeps the request's.
        if target.fragment == nil, let fragment = from.fragment,
           let withFragment = URL(string: target.absoluteString + "#" + fragment) {
            target = withFragment
        }
        if visited.count > limits.maximumRedirects {
            return .failure(NetworkingError(.tooManyRedirects, "more than \(limits.maximumRedirects) redirects", failingURL: from))
        }

        let sameOrigin = isSameOrigin(from, target)
        // The URL's credentials stay with their origin: a relative Location keeps them already
        // (RFC 3986 resolution), an absolute one to the same origin gets them as curl does;
        // another origin gets only what its Location itself says.
        if sameOrigin, target.user(percentEncoded: true) == nil, let user = from.user(percentEncoded: true),
           var components = URLComponents(url: target, resolvingAgainstBaseURL: false) {
            components.percentEncodedUser = user
            components.percentEncodedPassword = from.password(percentEncoded: true)
            target = components.url ?? target
        }

        var next = request
        next.url = target
        // 303 always, and 301/302 after a POST (what every browser does, which RFC 9110 allows),
        // become a GET without a body; 307 and 308 keep method and body.
        let becomesGET = (status == 303 && request.method != .head)
            || ((status == 301 || status == 302) && request.method == .post)
        if becomesGET {
            next.method = .get
            next.body = nil
            next.headerFields.removeAll { field in
                let name = field.name.lowercased()
                return name.hasPrefix("content-") || name == "transfer-encoding"
            }
        }
        if !sameOrigin {
            // Credentials meant for one origin must not reach another.
            next.headerFields.removeAll { field in
                let name = field.name.lowercased()
                return name == "authorization" || name == "cookie" || name == "proxy-authorization"
            }
        }
        // Host is the target's, written by the encoder.
        next.headerFields.removeAll { $0.name.caseInsensitiveCompare("Host") == .orderedSame }
        return .success(next)
    }

    /// Same scheme, host (case-insensitive) and port (defaults applied).
    static func isSameOrigin(_ a: URL, _ b: URL) -> Bool {
        func origin(_ url: URL) -> (String, String, Int) {
            let scheme = url.scheme?.lowercased() ?? ""
            return (scheme, url.host?.lowercased() ?? "", url.port ?? (scheme == "https" ? 443 : 80))
        }
        return origin(a) == origin(b)
    }
}
