import Foundation

/// The async verbs with `Encodable` parameters (see `HTTPSessionManager+Encodable.swift` for
/// where they go and how they are encoded); otherwise as the async verbs with `Any?` parameters
/// (`responseSerializer` included: this call's serializer, nil for the session's).
extension HTTPSessionManager {
    /// GET: `parameters` go to the query string.
    nonisolated(nonsending)
    public func get(_ urlString: String, parameters: some Encodable & Sendable,
                    headers: [String: String]? = nil,
                    responseSerializer: (any ResponseSerializer)? = nil) async throws -> DataResponse {
        try await data(for: makeRequest(.get, urlString, encoding: parameters, headers), responseSerializer: responseSerializer)
    }

    /// HEAD: `parameters` go to the query string.
    nonisolated(nonsending)
    public func head(_ urlString: String, parameters: some Encodable & Sendable,
                    headers: [String: String]? = nil,
                    responseSerializer: (any ResponseSerializer)? = nil) async throws -> DataResponse {
        try await data(for: makeRequest(.head, urlString, encoding: parameters, headers), responseSerializer: responseSerializer)
    }

    /// POST: `parameters` go to the body.
    nonisolated(nonsending)
    public func post(_ urlString: String, parameters: some Encodable & Sendable,
                    headers: [String: String]? = nil,
                    responseSerializer: (any ResponseSerializer)? = nil) async throws -> DataResponse {
        try await data(for: makeRequest(.post, urlString, encoding: parameters, headers), responseSerializer: responseSerializer)
    }

    /// PUT: `parameters` go to the body.
    nonisolated(nonsending)
    public func put(_ urlString: String, parameters: some Encodable & Sendable,
                    headers: [String: String]? = nil,
                    responseSerializer: (any ResponseSerializer)? = nil) async throws -> DataResponse {
        try await data(for: makeRequest(.put, urlString, encoding: parameters, headers), responseSerializer: responseSerializer)
    }

    /// PATCH: `parameters` go to the body.
    nonisolated(nonsending)
    public func patch(_ urlString: String, parameters: some Encodable & Sendable,
                    headers: [String: String]? = nil,
                    responseSerializer: (any ResponseSerializer)? = nil) async throws -> DataResponse {
        try await data(for: makeRequest(.patch, urlString, encoding: parameters, headers), responseSerializer: responseSerializer)
    }

    /// DELETE: `parameters` go to the query string.
    nonisolated(nonsending)
    public func delete(_ urlString: String, parameters: some Encodable & Sendable,
                    headers: [String: String]? = nil,
                    responseSerializer: (any ResponseSerializer)? = nil) async throws -> DataResponse {
        try await data(for: makeRequest(.delete, urlString, encoding: parameters, headers), responseSerializer: responseSerializer)
    }

    // MARK: Decodable

    /// GET with `Encodable` parameters, decoding the body as `T`.
    nonisolated(nonsending)
    public func get<T: Decodable & Sendable>(_ urlString: String, parameters: some Encodable & Sendable,
                    headers: [String: String]? = nil,
                    as type: T.Type, decoder: JSONDecoder = JSONDecoder()) async throws -> T {
        try await data(for: makeRequest(.get, urlString, encoding: parameters, headers), as: T.self, decoder: decoder)
    }

    /// POST with `Encodable` parameters, decoding the body as `T`.
    nonisolated(nonsending)
    public func post<T: Decodable & Sendable>(_ urlString: String, parameters: some Encodable & Sendable,
                    headers: [String: String]? = nil,
                    as type: T.Type, decoder: JSONDecoder = JSONDecoder()) async throws -> T {
        try await data(for: makeRequest(.post, urlString, encoding: parameters, headers), as: T.self, decoder: decoder)
    }

    /// PUT with `Encodable` parameters, decoding the body as `T`.
    nonisolated(nonsending)
    public func put<T: Decodable & Sendable>(_ urlString: String, parameters: some Encodable & Sendable,
                    headers: [String: String]? = nil,
                    as type: T.Type, decoder: JSONDecoder = JSONDecoder()) async throws -> T {
        try await data(for: makeRequest(.put, urlString, encoding: parameters, headers), as: T.self, decoder: decoder)
    }

    /// PATCH with `Encodable` parameters, decoding the body as `T`.
    nonisolated(nonsending)
    public func patch<T: Decodable & Sendable>(_ urlString: String, parameters: some Encodable & Sendable,
                    headers: [String: String]? = nil,
                    as type: T.Type, decoder: JSONDecoder = JSONDecoder()) async throws -> T {
        try await data(for: makeRequest(.patch, urlString, encoding: parameters, headers), as: T.self, decoder: decoder)
    }

    /// DELETE with `Encodable` parameters, decoding the body as `T`.
    nonisolated(nonsending)
    public func delete<T: Decodable & Sendable>(_ urlString: String, parameters: some Encodable & Sendable,
                    headers: [String: String]? = nil,
                    as type: T.Type, decoder: JSONDecoder = JSONDecoder()) async throws -> T {
        try await data(for: makeRequest(.delete, urlString, encoding: parameters, headers), as: T.self, decoder: decoder)
    }
}
