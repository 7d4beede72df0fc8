import Foundation

extension RobotsTxt {
    /// The URL of the robots.txt that governs `url`: `/robots.txt` on its origin (scheme, host,
    /// port; RFC 9309 §2.3). nil for a URL without a scheme or host.
    public static func url(governing url: URL) -> URL? {
        guard let scheme = url.scheme, let host = url.host, !host.isEmpty else { return nil }
        var components = URLComponents()
        components.scheme = scheme
        components.host = host
        components.port = url.port
        components.path = "/robots.txt"
        return components.url
    }

    /// Fetches `request` (a robots.txt URL, with the crawler's User-Agent) through `manager`
    /// and reads the outcome as RFC 9309 §2.3.1 says (`init(status:body:)`): more redirects
    /// than the session follows count as unavailable (§2.3.1.2: everything allowed), any other
    /// failure as unreachable (everything disallowed). Only the first `maximumParsedBytes` of
    /// the body are downloaded: the rest of a larger file is cancelled, never read.
    ///
    /// The session should follow at least five redirects, across origins (§2.3.1.2), and not
    /// be paced: a Crawl-delay spaces a crawler's pages, not its robots.txt fetches.
    public static func fetch(_ request: Request, with manager: SessionManager) async -> RobotsTxt {
        do {
            let (response, stream) = try await manager.bytes(for: request)
            var body: [UInt8] = []
            // One byte past the limit, so the parser knows a line cut there goes on (and drops
            // it). Leaving the loop early drops the stream, which cancels the rest of the body.
            let wanted = maximumParsedBytes + 1
            for try await chunk in stream {
                body += chunk.prefix(wanted - body.count)
                if body.count >= wanted { break }
            }
            return RobotsTxt(status: response.status.code, body: body)
        } catch let error as NetworkingError where error.code == .tooManyRedirects {
            return .allowAll
        } catch {
            return RobotsTxt(status: nil, body: [UInt8]())
        }
    }
}
