import Foundation
import HTTPTypes

/// Validates, then parses the body as a property list, like AFPropertyListResponseSerializer.
/// Accepts application/x-plist.
public struct PropertyListResponseSerializer: ValidatingResponseSerializer {
    /// The validation rules; the content types default to application/x-plist.
    public var validation: HTTPResponseSerializer
    /// The expected format. Reading detects the format by itself; kept, as in AFNetworking, for
    /// callers that configure it.
    public var format: PropertyListSerialization.PropertyListFormat = .xml
    /// Options for PropertyListSerialization (mutability of the result).
    public var readOptions: PropertyListSerialization.ReadOptions = []

    /// Accepts application/x-plist.
    public init() {
        validation = HTTPResponseSerializer()
        validation.acceptableContentTypes = ["application/x-plist"]
    }

    /// True: it parses the body, on the worker pool.
    public var needsWorkerThread: Bool { true }

    /// Validates, then parses; an empty body is nil without error.
    public func responseObject(for response: HTTPResponse, data: Data?) throws -> Any? {
        let failure = try validation.validationErrorAllowingParse(for: response, data: data)
        // AFNetworking returns nil for no data; an empty body is the same here (a 204).
        guard let data, !data.isEmpty else { return try HTTPResponseSerializer.deliver(nil, despite: failure) }
        let object: Any
        do {
            object = try PropertyListSerialization.propertyList(from: data, options: readOptions, format: nil)
        } catch {
            throw NetworkingError(.serializationFailed, "the response is not a valid property list: \(error.localizedDescription)",
                                  response: response, responseData: data, underlyingError: failure ?? error)
        }
        return try HTTPResponseSerializer.deliver(object, despite: failure)
    }
}
