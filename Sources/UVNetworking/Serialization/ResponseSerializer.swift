import Foundation
import HTTPTypes

/// Turns a response and its body into the object a completion handler receives. Runs on the
/// session's worker pool, never on the loop thread.
public protocol ResponseSerializer: Sendable {
    /// The object for this response, or nil. Throwing fails the task with that error.
    func responseObject(for response: HTTPResponse, data: Data?) throws -> Any?
}

/// Validates the status code and content type, and returns the body unchanged, like
/// AFHTTPResponseSerializer.
public struct HTTPResponseSerializer: ResponseSerializer {
    /// Status codes that count as success. AFNetworking's default: 200..<300.
    public var acceptableStatusCodes: IndexSet = IndexSet(integersIn: 200..<300)
    /// MIME types accepted; nil accepts any.
    public var acceptableContentTypes: Set<String>?

    /// A serializer with AFNetworking's defaults.
    public init() {}

    /// Checks content type, then status, in AFNetworking's order; throws the failure, carrying the
    /// response and its body.
    public func validate(_ response: HTTPResponse, data: Data?) throws {
        var contentTypeError: NetworkingError?
        if let acceptable = acceptableContentTypes {
            let mimeType = response.headerFields[.contentType].map(Self.mimeType(of:))
            // A response without a type and without a body has nothing to reject.
            if mimeType == nil && (data?.isEmpty ?? true) {
                contentTypeError = nil
            } else if mimeType.map({ !acceptable.contains($0) }) ?? true {
                contentTypeError = NetworkingError(.unacceptableContentType,
                                                   "Request failed: unacceptable content-type: \(mimeType ?? "none")",
                                                   response: response, responseData: data)
            }
        }
        if !acceptableStatusCodes.contains(response.status.code) {
            throw NetworkingError(.unacceptableStatusCode,
                                  "Request failed: \(response.status.reasonPhrase.lowercased()) (\(response.status.code))",
                                  response: response, responseData: data, underlyingError: contentTypeError)
        }
        if let contentTypeError { throw contentTypeError }
    }

    /// "application/json" from "application/json; charset=utf-8".
    static func mimeType(of contentType: String) -> String {
        let end = contentType.firstIndex(of: ";") ?? contentType.endIndex
        return contentType[..<end].trimmingCharacters(in: .whitespaces).lowercased()
    }

    /// Validates and returns the body.
    public func responseObject(for response: HTTPResponse, data: Data?) throws -> Any? {
        try validate(response, data: data)
        return data
    }
}

/// Validates, then parses the body as JSON, like AFJSONResponseSerializer.
public struct JSONResponseSerializer: ResponseSerializer {
    /// The validation rules; the content types default to the JSON ones.
    public var validation: HTTPResponseSerializer
    /// Options for JSONSerialization.
    public var readingOptions: JSONSerialization.ReadingOptions = []

    /// Accepts application/json, text/json and text/javascript.
    public init() {
        validation = HTTPResponseSerializer()
        validation.acceptableContentTypes = ["application/json", "text/json", "text/javascript"]
    }

    /// Validates, then parses; an empty body or a single space is nil without error.
    public func responseObject(for response: HTTPResponse, data: Data?) throws -> Any? {
        try validation.validate(response, data: data)
        guard let data, !data.isEmpty, data != Data([0x20]) else { return nil }
        do {
            return try JSONSerialization.jsonObject(with: data, options: readingOptions)
        } catch {
            throw NetworkingError(.serializationFailed, "the response is not valid JSON: \(error.localizedDescription)",
                                  response: response, responseData: data)
        }
    }
}
