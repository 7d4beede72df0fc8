import Foundation
import HTTPTypes

/// The verbs, async: each builds its request like its completion-handler twin (base URL,
/// `requestSerializer`, then `headers`) on the caller's executor, then runs it like
/// `SessionManager.data(for:)`. A request that does not serialize throws before anything is
/// sent. See `SessionManager.data(for:responseSerializer:)` for threads, errors, cancellation and
/// `responseSerializer` (this call's serializer; nil, the default, uses the session's).
extension HTTPSessionManager {
    /// GET: parameters go to the query string.
    nonisolated(nonsending)
    public func get(_ urlString: String, parameters: Any? = nil, headers: [String: String]? = nil,
                    responseSerializer: (any ResponseSerializer)? = nil) async throws -> DataResponse {
        try await data(for: makeRequest(.get, urlString, parameters, headers), responseSerializer: responseSerializer)
    }

    /// HEAD: the response has no body; `value` is nil.
    nonisolated(nonsending)
    public func head(_ urlString: String, parameters: Any? = nil, headers: [String: String]? = nil,
                     responseSerializer: (any ResponseSerializer)? = nil) async throws -> DataResponse {
        try await data(for: makeRequest(.head, urlString, parameters, headers), responseSerializer: responseSerializer)
    }

    /// POST: parameters go to the body.
    nonisolated(nonsending)
    public func post(_ urlString: String, parameters: Any? = nil, headers: [String: String]? = nil,
                     responseSerializer: (any ResponseSerializer)? = nil) async throws -> DataResponse {
        try await data(for: makeRequest(.post, urlString, parameters, headers), responseSerializer: responseSerializer)
    }

    /// PUT: parameters go to the body.
    nonisolated(nonsending)
    public func put(_ urlString: String, parameters: Any? = nil, headers: [String: String]? = nil,
                    responseSerializer: (any ResponseSerializer)? = nil) async throws -> DataResponse {
        try await data(for: makeRequest(.put, urlString, parameters, headers), responseSerializer: responseSerializer)
    }

    /// PATCH: parameters go to the body.
    nonisolated(nonsending)
    public func patch(_ urlString: String, parameters: Any? = nil, headers: [String: String]? = nil,
                      responseSerializer: (any ResponseSerializer)? = nil) async throws -> DataResponse {
        try await data(for: makeRequest(.patch, urlString, parameters, headers), responseSerializer: responseSerializer)
    }

    /// DELETE: parameters go to the query string.
    nonisolated(nonsending)
    public func delete(_ urlString: String, parameters: Any? = nil, headers: [String: String]? = nil,
                       responseSerializer: (any ResponseSerializer)? = nil) async throws -> DataResponse {
        try await data(for: makeRequest(.delete, urlString, parameters, headers), responseSerializer: responseSerializer)
    }

    // MARK: Decodable

    /// GET, decoding the body as `T` (see `SessionManager.data(for:as:decoder:)`).
    nonisolated(nonsending)
    public func get<T: Decodable & Sendable>(_ urlString: String, parameters: Any? = nil, headers: [String: String]? = nil,
                                             as type: T.Type, decoder: JSONDecoder = JSONDecoder()) async throws -> T {
        try await data(for: makeRequest(.get, urlString, parameters, headers), as: T.self, decoder: decoder)
    }

    /// POST, decoding the body as `T`.
    nonisolated(nonsending)
    public func post<T: Decodable & Sendable>(_ urlString: String, parameters: Any? = nil, headers: [String: String]? = nil,
                                              as type: T.Type, decoder: JSONDecoder = JSONDecoder()) async throws -> T {
        try await data(for: makeRequest(.post, urlString, parameters, headers), as: T.self, decoder: decoder)
    }

    /// PUT, decoding the body as `T`.
    nonisolated(nonsending)
    public func put<T: Decodable & Sendable>(_ urlString: String, parameters: Any? = nil, headers: [String: String]? = nil,
                                             as type: T.Type, decoder: JSONDecoder = JSONDecoder()) async throws -> T {
        try await data(for: makeRequest(.put, urlString, parameters, headers), as: T.self, decoder: decoder)
    }

    /// PATCH, decoding the body as `T`.
    nonisolated(nonsending)
    public func patch<T: Decodable & Sendable>(_ urlString: String, parameters: Any? = nil, headers: [String: String]? = nil,
                                               as type: T.Type, decoder: JSONDecoder = JSONDecoder()) async throws -> T {
        try await data(for: makeRequest(.patch, urlString, parameters, headers), as: T.self, decoder: decoder)
    }

    /// DELETE, decoding the body as `T`.
    nonisolated(nonsending)
    public func delete<T: Decodable & Sendable>(_ urlString: String, parameters: Any? = nil, headers: [String: String]? = nil,
                                                as type: T.Type, decoder: JSONDecoder = JSONDecoder()) async throws -> T {
        try await data(for: makeRequest(.delete, urlString, parameters, headers), as: T.self, decoder: decoder)
    }
}
