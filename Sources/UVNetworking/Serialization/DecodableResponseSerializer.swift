import Foundation
import HTTPTypes

/// Validates like `JSONResponseSerializer`, then decodes the body as `T` with a `JSONDecoder`.
///
/// An empty body (or a single space) is nil without error. On a rejected status the error body
/// is still decoded: if it decodes, the value travels with the status error (`responseObject`);
/// if it does not, the status error alone is thrown, since an error body rarely has `T`'s shape
/// and the status is the news.
public struct DecodableResponseSerializer<T: Decodable>: ValidatingResponseSerializer {
    /// The validation rules; the content types default to the JSON ones.
    public var validation: HTTPResponseSerializer
    /// The decoder; configure its strategies here.
    public var decoder: JSONDecoder

    /// Decodes `type` with `decoder`; accepts application/json, text/json and text/javascript.
    public init(_ type: T.Type = T.self, decoder: JSONDecoder = JSONDecoder()) {
        self.decoder = decoder
        validation = JSONResponseSerializer().validation
    }

    /// True: it decodes the body, on the worker pool.
    public var needsWorkerThread: Bool { true }

    /// Validates, then decodes; decoding errors are `.serializationFailed` with the
    /// `DecodingError` as the underlying error.
    public func responseObject(for response: HTTPResponse, data: Data?) throws -> Any? {
        let failure = try validation.validationErrorAllowingParse(for: response, data: data)
        guard let data, !data.isEmpty, !(data.count == 1 && data.first == 0x20) else {
            return try HTTPResponseSerializer.deliver(nil, despite: failure)
        }
        let value: T
        do {
            value = try decoder.decode(T.self, from: data)
        } catch {
            if let failure { throw failure }
            throw NetworkingError(.serializationFailed, "the response does not decode as \(T.self): \(error)",
                                  response: response, responseData: data, underlyingError: error)
        }
        return try HTTPResponseSerializer.deliver(value, despite: failure)
    }
}
