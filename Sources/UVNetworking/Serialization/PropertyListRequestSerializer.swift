import Foundation
import Synchronization

/// Encodes parameters as a property list body with Content-Type `application/x-plist`, like
/// AFPropertyListRequestSerializer. Methods that encode parameters in the URI (GET, HEAD, DELETE
/// by default) still get a query string, as in the superclass.
open class PropertyListRequestSerializer: HTTPRequestSerializer, @unchecked Sendable {
    // @unchecked: the only mutable state added is `settings`, behind a Mutex.

    private struct Settings {
        var format: PropertyListSerialization.PropertyListFormat = .xml
        var writeOptions: PropertyListSerialization.WriteOptions = 0
    }

    private let settings = Mutex(Settings())

    /// The format of the body; XML by default. (OpenStep cannot be written: serializing fails.)
    public var format: PropertyListSerialization.PropertyListFormat {
        get { settings.withLock { $0.format } }
        set { settings.withLock { $0.format = newValue } }
    }

    /// Options for writing the body; none by default (PropertyListSerialization defines none).
    public var writeOptions: PropertyListSerialization.WriteOptions {
        get { settings.withLock { $0.writeOptions } }
        set { settings.withLock { $0.writeOptions = newValue } }
    }

    /// A serializer with AFNetworking's defaults and the XML format.
    public override init() { super.init() }

    /// Adds the defaults, then, for non-URI methods with parameters, the property list body and
    /// Content-Type `application/x-plist` unless one is set. Nil parameters leave the body as it
    /// is.
    open override func serialize(_ request: Request, parameters: Any?) throws -> Request {
        let (format, options) = settings.withLock { ($0.format, $0.writeOptions) }
        return try serializingBody(request, parameters: parameters, contentType: "application/x-plist",
                                   invalidMessage: "The `parameters` argument is not valid Property List.") { parameters in
            guard PropertyListSerialization.propertyList(parameters, isValidFor: format) else { return nil }
            return try PropertyListSerialization.data(fromPropertyList: parameters, format: format, options: options)
        }
    }
}
