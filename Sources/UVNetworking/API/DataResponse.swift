import Foundation
import HTTPTypes

/// What an async request returns: the response, its body, and the object the manager's response
/// serializer made from them.
///
/// Metrics are not here yet; a `metrics` property can be added later without breaking callers.
public struct DataResponse: Sendable {
    /// The response head.
    public let response: HTTPResponse
    /// The body, as received (after decoding the transfer coding).
    public let data: Data
    /// What the session measured about the request (see `TaskMetrics`).
    public let metrics: TaskMetrics?
    private let object: SerializedObject?

    init(response: HTTPResponse, data: Data, value: Any?, metrics: TaskMetrics? = nil) {
        self.response = response
        self.data = data
        self.metrics = metrics
        self.object = value.map(SerializedObject.init)
    }

    /// The response serializer's object: a JSON object for `JSONResponseSerializer`, `Data` for
    /// `HTTPResponseSerializer`, nil for an empty body.
    public var value: Any? { object?.value }

    /// `value` as a `T`, or nil if it is absent or of another type.
    public func value<T>(as type: T.Type) -> T? { object?.value as? T }

    /// The HTTP status code.
    public var statusCode: Int { response.status.code }

    /// Holds `value`, which is `Any` and so not Sendable.
    ///
    /// @unchecked: the serializer makes the object on a worker thread and hands it over in this
    /// response to the one caller awaiting it; UVNetworking keeps no reference and never reads or
    /// mutates it afterwards. The serializers make value types or immutable Foundation objects;
    /// a caller that shares a mutable object between tasks owns that choice.
    private final class SerializedObject: @unchecked Sendable {
        let value: Any
        init(_ value: Any) { self.value = value }
    }
}
