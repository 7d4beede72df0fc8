import Foundation
import Synchronization

/// Encodes parameters as a JSON body with Content-Type `application/json`, like
/// AFJSONRequestSerializer. Methods that encode parameters in the URI (GET, HEAD, DELETE by
/// default) still get a query string, as in the superclass.
open class JSONRequestSerializer: HTTPRequestSerializer, @unchecked Sendable {
    // @unchecked: the only mutable state added is `options`, behind a Mutex.

    private let options = Mutex<JSONSerialization.WritingOptions>([])

    /// Options for writing the JSON body; none by default.
    public var writingOptions: JSONSerialization.WritingOptions {
        get { options.withLock { $0 } }
        set { options.withLock { $0 = newValue } }
    }

    /// A serializer with AFNetworking's defaults and no writing options.
    public override init() { super.init() }

    /// Adds the defaults, then, for non-URI methods with parameters, the JSON body (any
    /// top-level object JSONSerialization accepts, arrays included) and Content-Type
    /// `application/json` unless one is set. Nil parameters leave the body as it is.
    open override func serialize(_ request: Request, parameters: Any?) throws -> Request {
        if encodesParametersInURI(request.method) { return try super.serialize(request, parameters: parameters) }
        var request = applyingDefaults(to: request)
        guard let parameters else { return request }
        if request.value(forHTTPHeaderField: "Content-Type") == nil {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        // Checked first: JSONSerialization traps, rather than throws, on some invalid objects.
        guard JSONSerialization.isValidJSONObject(parameters) else {
            throw NetworkingError(.requestSerializationFailed, "The `parameters` argument is not valid JSON.",
                                  failingURL: request.url)
        }
        do {
            request.body = try JSONSerialization.data(withJSONObject: parameters, options: writingOptions)
        } catch {
            throw NetworkingError(.requestSerializationFailed, "The `parameters` argument is not valid JSON.",
                                  failingURL: request.url, underlyingError: error)
        }
        return request
    }
}
