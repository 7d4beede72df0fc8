import Foundation
import HTTPTypes

/// Validates, then parses the body as JSON, like AFJSONResponseSerializer.
///
/// A rejected content type fails without parsing. A rejected status still parses: the completion
/// handler gets the parsed error body and the status error (the error's `responseObject`).
public struct JSONResponseSerializer: ValidatingResponseSerializer {
    /// The validation rules; the content types default to the JSON ones.
    public var validation: HTTPResponseSerializer
    /// Options for JSONSerialization.
    public var readingOptions: JSONSerialization.ReadingOptions = []
    /// Whether to drop null values from dictionaries and arrays, at every depth, as AFNetworking
    /// does. The result is then made of Swift collections (`[String: Any]`, `[Any]`).
    public var removesKeysWithNullValues = false

    /// Accepts application/json, text/json and text/javascript.
    public init() {
        validation = HTTPResponseSerializer()
        validation.acceptableContentTypes = ["application/json", "text/json", "text/javascript"]
    }

    /// True: it parses the body, on the worker pool.
    public var needsWorkerThread: Bool { true }

    /// Validates, then parses; an empty body or a single space is nil without error.
    public func responseObject(for response: HTTPResponse, data: Data?) throws -> Any? {
        let failure = try validation.validationErrorAllowingParse(for: response, data: data)
        // Rails answers `head :ok` with one space, which JSONSerialization rejects.
        guard let data, !data.isEmpty, !(data.count == 1 && data.first == 0x20) else {
            return try HTTPResponseSerializer.deliver(nil, despite: failure)
        }
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: data, options: readingOptions)
        } catch {
            // As AFNetworking: the parse error wraps the validation error, if there was one.
            throw NetworkingError(.serializationFailed, "the response is not valid JSON: \(error.localizedDescription)",
                                  response: response, responseData: data, underlyingError: failure ?? error)
        }
        return try HTTPResponseSerializer.deliver(removesKeysWithNullValues ? Self.removingNulls(from: object) : object,
                                                  despite: failure)
    }

    /// The object without NSNull: dictionary entries holding one are removed, array elements
    /// that are one are dropped, recursively.
    static func removingNulls(from object: Any) -> Any {
        if let dictionary = object as? [String: Any] {
            var result = [String: Any](minimumCapacity: dictionary.count)
            for (key, value) in dictionary where !(value is NSNull) {
                result[key] = removingNulls(from: value)
            }
            return result
        }
        if let array = object as? [Any] {
            return array.compactMap { $0 is NSNull ? nil : removingNulls(from: $0) }
        }
        return object
    }
}
