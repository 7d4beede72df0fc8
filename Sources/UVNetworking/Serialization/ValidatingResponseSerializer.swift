import Foundation

/// A serializer that validates with an `HTTPResponseSerializer` before doing its own work, the
/// Swift form of AFNetworking's subclasses of AFHTTPResponseSerializer.
public protocol ValidatingResponseSerializer: ResponseSerializer {
    /// The validation rules.
    var validation: HTTPResponseSerializer { get set }
}

extension ValidatingResponseSerializer {
    /// Status codes that count as success (`validation.acceptableStatusCodes`).
    public var acceptableStatusCodes: IndexSet {
        get { validation.acceptableStatusCodes }
        set { validation.acceptableStatusCodes = newValue }
    }

    /// MIME types accepted; nil accepts any (`validation.acceptableContentTypes`).
    public var acceptableContentTypes: Set<String>? {
        get { validation.acceptableContentTypes }
        set { validation.acceptableContentTypes = newValue }
    }
}
