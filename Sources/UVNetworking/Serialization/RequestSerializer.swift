import Foundation

/// Turns parameters into a request, like AFURLRequestSerialization.
public protocol RequestSerializer: Sendable {
    /// A copy of `request` carrying `parameters` (in its URL or its body, as the serializer
    /// decides) and the serializer's defaults. Throws a `NetworkingError` when the parameters
    /// cannot be encoded.
    func serialize(_ request: Request, parameters: Any?) throws -> Request
}
