import Foundation
import HTTPTypes

/// Tries several serializers in order, like AFCompoundResponseSerializer.
///
/// The first serializer that produces an object wins, with its error if it threw one carrying
/// the object (a rejected status). Serializers that produce nothing, or fail without an object,
/// are skipped and their errors dropped. When none produces an object, the compound validates
/// with its own rules and returns the body, as AFNetworking falls back to
/// AFHTTPResponseSerializer.
public struct CompoundResponseSerializer: ValidatingResponseSerializer {
    /// The serializers, in the order they are tried.
    public var responseSerializers: [any ResponseSerializer]
    /// The rules of the fallback; by default AFHTTPResponseSerializer's (200..<300, any type).
    public var validation = HTTPResponseSerializer()

    /// A serializer that tries `responseSerializers` in order.
    public init(_ responseSerializers: [any ResponseSerializer]) {
        self.responseSerializers = responseSerializers
    }

    /// Whether any of `responseSerializers` needs a worker thread (the fallback validation does not).
    public var needsWorkerThread: Bool { responseSerializers.contains { $0.needsWorkerThread } }

    /// The first object produced, else the body validated by `validation`.
    public func responseObject(for response: HTTPResponse, data: Data?) throws -> Any? {
        for serializer in responseSerializers {
            do {
                if let object = try serializer.responseObject(for: response, data: data) { return object }
            } catch let error as NetworkingError where error.responseObject != nil {
                throw error
            } catch {
                continue
            }
        }
        return try validation.responseObject(for: response, data: data)
    }
}
