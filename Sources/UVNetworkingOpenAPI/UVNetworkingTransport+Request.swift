import Foundation
import HTTPTypes
import OpenAPIRuntime
import UVNetworking

extension UVNetworkingTransport {
    /// The library's request for an OpenAPI request: the URL is the base URL with the request's
    /// path (and query) appended, the fields are passed on as they are.
    func makeRequest(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL) async throws -> Request {
        let url = try Self.url(for: request, baseURL: baseURL)
        var prepared = Request(url: url, method: request.method, headerFields: request.headerFields,
                               timeoutInterval: configuration.timeoutInterval)
        prepared.totalTimeoutInterval = configuration.totalTimeoutInterval
        prepared.httpShouldHandleCookies = configuration.httpShouldHandleCookies
        if let body {
            prepared.body = try await Self.collect(body, upTo: configuration.maximumRequestBodyBytes, url: url)
        }
        return prepared
    }

    /// `baseURL` followed by the request's path. The generator's paths start with "/" and are
    /// already percent-encoded (with their query); a base URL's own path is kept, so
    /// `https://host/v1` and `/pets` make `https://host/v1/pets`.
    static func url(for request: HTTPRequest, baseURL: URL) throws -> URL {
        let path = request.path ?? ""
        var base = baseURL.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        let joined = path.isEmpty || path.hasPrefix("/") ? base + path : base + "/" + path
        guard let url = URL(string: joined) else {
            throw NetworkingError(.invalidURL, "\(request.method) \(path) relative to \(baseURL.absoluteString) is not a URL")
        }
        return url
    }

    /// The whole body in memory, refused beyond `limit` bytes.
    static func collect(_ body: HTTPBody, upTo limit: Int, url: URL) async throws -> Data {
        if case .known(let length) = body.length, length > Int64(limit) {
            throw tooLarge(length, limit: limit, url: url)
        }
        var data = Data()
        for try await chunk in body {
            guard data.count + chunk.count <= limit else { throw tooLarge(nil, limit: limit, url: url) }
            data.append(contentsOf: chunk)
        }
        return data
    }

    private static func tooLarge(_ length: Int64?, limit: Int, url: URL) -> NetworkingError {
        let size = length.map { "\($0) bytes" } ?? "more bytes"
        return NetworkingError(.requestSerializationFailed,
                               "the request body has \(size) than maximumRequestBodyBytes (\(limit)) allows",
                               failingURL: url)
    }
}
