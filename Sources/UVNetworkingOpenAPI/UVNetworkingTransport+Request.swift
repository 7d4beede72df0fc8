import Foundation
import HTTPTypes
import OpenAPIRuntime
import UVNetworking

extension UVNetworkingTransport {
    /// Known-length bodies up to this size, and replayable, are gathered before sending: they
    /// leave with the request head in one write (what a generated client's JSON bodies are),
    /// where a streamed body would take a Swift task and a hand-off per chunk.
    static let inlineBodyLimit = 64 * 1024

    /// The library's request for an OpenAPI request: the URL is the base URL with the request's
    /// path (and query) appended, the fields are passed on as they are, the body streams.
    func makeRequest(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL) async throws -> Request {
        let url = try Self.url(for: request, baseURL: baseURL)
        var prepared = Request(url: url, method: request.method, headerFields: request.headerFields,
                               timeoutInterval: configuration.timeoutInterval)
        prepared.totalTimeoutInterval = configuration.totalTimeoutInterval
        prepared.httpShouldHandleCookies = configuration.httpShouldHandleCookies
        guard let body else { return prepared }
        if case .known(let length) = body.length, length <= Int64(Self.inlineBodyLimit), body.iterationBehavior == .multiple {
            prepared.body = try await Self.gather(body, length: Int(length), url: url)
        } else {
            prepared.bodyStream = Self.streamed(body, bufferLimit: configuration.requestBodyBufferLimit)
        }
        return prepared
    }

    /// `body` as a streamed request body: sent with Content-Length when its length is known,
    /// chunked otherwise. A body that can be iterated again is sent again from its start when
    /// the request must be (a retry on a fresh connection, a 307 or 308 redirect); a single-pass
    /// one fails such a second attempt with `bodyStreamFailed`.
    static func streamed(_ body: HTTPBody, bufferLimit: Int) -> StreamedBody {
        let length: Int64? = if case .known(let length) = body.length { length } else { nil }
        switch body.iterationBehavior {
        case .multiple: return StreamedBody(length: length, bufferLimit: bufferLimit) { body }
        case .single: return StreamedBody(length: length, bufferLimit: bufferLimit, oneShot: body)
        }
    }

    /// A small body in memory: exactly its declared `length` bytes, as a streamed one must be.
    static func gather(_ body: HTTPBody, length: Int, url: URL) async throws -> Data {
        var data = Data(capacity: length)
        do {
            for try await chunk in body {
                guard data.count + chunk.count <= length else {
                    throw NetworkingError(.bodyStreamFailed, "the request body has more than its declared \(length) bytes",
                                          failingURL: url)
                }
                data.append(contentsOf: chunk)
            }
        } catch let error as NetworkingError {
            throw error
        } catch {
            throw NetworkingError(.bodyStreamFailed, "the request body failed", failingURL: url, underlyingError: error)
        }
        guard data.count == length else {
            throw NetworkingError(.bodyStreamFailed, "the request body ended after \(data.count) of its declared \(length) bytes",
                                  failingURL: url)
        }
        return data
    }

    /// `baseURL` followed by the request's path. The generator's paths start with "/" and are
    /// already percent-encoded (with their query); a base URL's own path is kept, so
    /// `https://host/v1` and `/pets` make `https://host/v1/pets`. A base URL's query (an API key
    /// in a server URL) stays the query, the request's own added after it; a fragment is dropped.
    static func url(for request: HTTPRequest, baseURL: URL) throws -> URL {
        let (path, query) = splitQuery(request.path ?? "")
        var whole = baseURL.absoluteString
        if let fragment = whole.firstIndex(of: "#") { whole = String(whole[..<fragment]) }
        var (base, baseQuery) = splitQuery(whole)
        while base.hasSuffix("/") { base.removeLast() }
        var joined = path.isEmpty || path.hasPrefix("/") ? base + path : base + "/" + path
        let queries = [baseQuery, query].compactMap { $0 }.filter { !$0.isEmpty }
        if !queries.isEmpty { joined += "?" + queries.joined(separator: "&") }
        guard let url = URL(string: joined) else { throw NetworkingError(.invalidURL, "\(request.method) \(request.path ?? "") relative to \(baseURL.absoluteString) is not a URL") }
        return url
    }

    /// `target` before its first "?", and what follows it (nil without a "?").
    private static func splitQuery(_ target: String) -> (String, String?) {
        guard let mark = target.firstIndex(of: "?") else { return (target, nil) }
        return (String(target[..<mark]), String(target[target.index(after: mark)...]))
    }
}
