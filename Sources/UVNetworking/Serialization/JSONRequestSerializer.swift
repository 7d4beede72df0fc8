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
        let options = writingOptions
        return try serializingBody(request, parameters: parameters, contentType: "application/json",
                                   invalidMessage: "The `parameters` argument is not valid JSON.") { parameters in
            // Checked first: JSONSerialization traps, rather than throws, on some invalid objects.
            guard JSONSerialization.isValidJSONObject(parameters) else { return nil }
            return try JSONSerialization.data(withJSONObject: parameters, options: options)
        }
    }

    /// For methods that encode parameters in the URI, the query string of the superclass's rule;
    /// otherwise a body written by `JSONEncoder` (its default strategies, but dates as ISO 8601
    /// strings as in a query; `writingOptions`' pretty printing, sorted keys and unescaped slashes
    /// carried over) with Content-Type `application/json` unless one is set.
    open override func serialize<Parameters: Encodable & Sendable>(_ request: Request, encoding parameters: Parameters) throws -> Request {
        if encodesParametersInURI(request.method) { return try super.serialize(request, encoding: parameters) }
        let encoder = JSONEncoder()
        let options = writingOptions
        var formatting: JSONEncoder.OutputFormatting = []
        if options.contains(.prettyPrinted) { formatting.insert(.prettyPrinted) }
        if options.contains(.sortedKeys) { formatting.insert(.sortedKeys) }
        if options.contains(.withoutEscapingSlashes) { formatting.insert(.withoutEscapingSlashes) }
        encoder.outputFormatting = formatting
        // A date as the query and form encodings write it (ISO 8601, UTC, whole seconds), not
        // the default's seconds since 2001, so one struct sends one text wherever it goes.
        encoder.dateEncodingStrategy = .iso8601
        return try serializingBody(request, parameters: parameters, contentType: "application/json",
                                   invalidMessage: "The `parameters` argument does not encode as JSON.") { _ in
            try encoder.encode(parameters)
        }
    }
}
