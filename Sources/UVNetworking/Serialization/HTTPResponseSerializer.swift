import Foundation
import HTTPTypes

/// Validates the status code and content type, and returns the body unchanged, like
/// AFHTTPResponseSerializer.
public struct HTTPResponseSerializer: ResponseSerializer {
    /// Status codes that count as success. AFNetworking's default: 200..<300.
    public var acceptableStatusCodes: IndexSet = IndexSet(integersIn: 200..<300) {
        didSet { acceptsExactlySuccess = acceptableStatusCodes == IndexSet(integersIn: 200..<300) }
    }
    /// `acceptableStatusCodes` is the default 200..<300: a range check answers, without
    /// IndexSet's lookup (about 190 instructions per response with Linux's Foundation).
    private var acceptsExactlySuccess = true
    /// MIME types accepted (compared case-insensitively, parameters ignored); nil accepts any.
    public var acceptableContentTypes: Set<String>?

    /// A serializer with AFNetworking's defaults.
    public init() {}

    /// False: validation reads the status and one field, whatever the body's size, so it runs
    /// where the completion handler runs, without a hop through the worker pool.
    public var needsWorkerThread: Bool { false }

    /// Checks content type, then status, in AFNetworking's order; throws the failure, carrying the
    /// response and its body. When both fail, the status error wraps the content-type error.
    public func validate(_ response: HTTPResponse, data: Data?) throws {
        if let failure = validationError(for: response, data: data) { throw failure }
    }

    /// Validates and returns the body. On failure the body still goes to the completion handler,
    /// with the error, as AFNetworking returns it whatever the validation said.
    public func responseObject(for response: HTTPResponse, data: Data?) throws -> Any? {
        try Self.deliver(data, despite: validationError(for: response, data: data))
    }

    /// `responseObject(for:data:)` given the response's status code, which the session already
    /// holds as an integer: swift-http-types parses `response.status` from its text on each read.
    func responseObject(for response: HTTPResponse, data: Data?, statusCode: Int) throws -> Any? {
        // Any type and an accepted status (most responses): nothing to build. Asking
        // `validationError` would make and test an optional error, a dozen words, per task.
        if acceptableContentTypes == nil && acceptsStatus(statusCode) { return data }
        return try Self.deliver(data, despite: validationError(for: response, data: data, statusCode: statusCode))
    }

    /// Whether `status` is among `acceptableStatusCodes`.
    @inline(__always)
    private func acceptsStatus(_ status: Int) -> Bool {
        acceptsExactlySuccess ? (200..<300).contains(status) : acceptableStatusCodes.contains(status)
    }

    /// The validation failure, or nil.
    func validationError(for response: HTTPResponse, data: Data?) -> NetworkingError? {
        validationError(for: response, data: data, statusCode: response.status.code)
    }

    /// The validation failure, or nil; `statusCode` is `response.status.code`.
    private func validationError(for response: HTTPResponse, data: Data?, statusCode status: Int) -> NetworkingError? {
        var contentTypeError: NetworkingError?
        // AFNetworking only builds the content-type error for a non-empty body: with nothing to
        // decode, the type does not matter (this also lets a typeless empty body through).
        if let acceptable = acceptableContentTypes, let data, !data.isEmpty {
            let mimeType = response.headerFields[.contentType].flatMap(Self.mimeType(of:))
            if !Self.contains(acceptable, mimeType) {
                contentTypeError = NetworkingError(.unacceptableContentType,
                                                   "Request failed: unacceptable content-type: \(mimeType ?? "(null)")",
                                                   response: response, responseData: data)
            }
        }
        if !acceptsStatus(status) {
            return NetworkingError(.unacceptableStatusCode, "Request failed: \(Self.reason(for: response.status)) (\(status))",
                                   response: response, responseData: data, underlyingError: contentTypeError)
        }
        return contentTypeError
    }

    /// The rule of the serializers that parse (AFNetworking's JSON, XML, property list): a
    /// rejected content type ends the work (throws), a rejected status does not (the error body
    /// is still parsed and delivered with the error, which is returned).
    func validationErrorAllowingParse(for response: HTTPResponse, data: Data?) throws -> NetworkingError? {
        guard let failure = validationError(for: response, data: data) else { return nil }
        if failure.code == .unacceptableContentType
            || (failure.underlyingError as? NetworkingError)?.code == .unacceptableContentType {
            throw failure
        }
        return failure
    }

    /// Returns the object, or throws the failure carrying it.
    static func deliver(_ object: Any?, despite failure: NetworkingError?) throws -> Any? {
        guard var failure else { return object }
        failure.responseObject = object
        throw failure
    }

    /// "application/json" from "Application/JSON; charset=utf-8"; nil for an empty type.
    static func mimeType(of contentType: String) -> String? {
        let end = contentType.firstIndex(of: ";") ?? contentType.endIndex
        let type = contentType[..<end].trimmingCharacters(in: .whitespaces).lowercased()
        return type.isEmpty ? nil : type
    }

    private static func contains(_ acceptable: Set<String>, _ mimeType: String?) -> Bool {
        guard let mimeType else { return false }
        // The set is the caller's spelling; the exact lookup is the common case.
        return acceptable.contains(mimeType) || acceptable.contains { $0.lowercased() == mimeType }
    }

    /// The reason in AFNetworking's lower-case style ("not found"); the status class when the
    /// server sent none.
    private static func reason(for status: HTTPResponse.Status) -> String {
        if !status.reasonPhrase.isEmpty { return status.reasonPhrase.lowercased() }
        switch status.kind {
        case .informational: return "informational"
        case .successful: return "success"
        case .redirection: return "redirected"
        case .clientError: return "client error"
        case .serverError: return "server error"
        case .invalid: return "invalid status"
        }
    }
}
