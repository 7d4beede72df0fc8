import Foundation
import HTTPTypes

/// Where sessions meet the store: one call to read the Cookie field for a request being
/// prepared, one to take in the Set-Cookie fields of a response.
extension CookieStore {
    /// Stores the Set-Cookie fields of `response`, received for a request to `url`.
    ///
    /// Sessions call it on a worker thread before the completion handler (for `bytes(for:)`,
    /// before the head is returned), once per response; call it yourself for responses that
    /// did not come through a session with this store.
    public func storeCookies(from response: HTTPResponse, for url: URL) {
        let lines = response.headerFields[values: .setCookie]
        guard !lines.isEmpty else { return }
        setCookies(fromSetCookieHeaders: lines, for: url)
    }

    /// The Cookie field value for a request with this target; nil when no cookie applies.
    /// The empty store, the common case of a store nothing has set cookies in yet, answers
    /// without looking at the URL.
    func cookieHeaderValue(for target: RequestTarget) -> String? {
        guard !isEmpty else { return nil }
        return cookieHeaderValue(for: CookieRequestURL(target))
    }
}
