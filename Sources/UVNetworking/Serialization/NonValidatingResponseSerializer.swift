import Foundation

/// The validation rules of a serializer that declares none: a custom `ResponseSerializer` that
/// only implements `responseObject(for:data:)` keeps compiling, and says what it does. It checks
/// no content type (nil) and accepts every status code (100...999, all that `HTTPResponse` can
/// hold). Setting either has no effect, since such a serializer does not consult them: to have
/// rules that apply, conform to `ValidatingResponseSerializer` (a `validation` property and a
/// call to `validation.validate(_:data:)`) or declare the two properties.
extension ResponseSerializer {
    /// Nil (any type is accepted); setting it has no effect on a serializer that does not validate.
    public var acceptableContentTypes: Set<String>? {
        get { nil }
        set {}
    }

    /// 100...999 (every status is accepted); setting it has no effect on a serializer that does
    /// not validate.
    public var acceptableStatusCodes: IndexSet {
        get { IndexSet(integersIn: 100...999) }
        set {}
    }
}
