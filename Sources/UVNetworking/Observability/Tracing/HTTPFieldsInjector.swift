import HTTPTypes
import Instrumentation

/// Writes a tracer's propagation fields (W3C `traceparent` and `tracestate`, or whatever the
/// bootstrapped instrument propagates) into `HTTPFields`, replacing a field of the same name:
/// the value a request carries is always the one the tracer gave for this task's span.
///
/// Sessions use it for every task when a tracer is configured (`SessionConfiguration.tracer`);
/// it is public for callers who build requests by hand and want the same propagation.
public struct HTTPFieldsInjector: Injector {
    /// Creates the injector; it has no state.
    public init() {}

    /// Sets `key` to `value` in `fields`. A key that is not a valid field name is skipped, as
    /// no server could read it.
    public func inject(_ value: String, forKey key: String, into fields: inout HTTPFields) {
        guard let name = HTTPField.Name(key) else { return }
        fields[name] = value
    }
}

/// Reads propagation fields from `HTTPFields`: the other half of `HTTPFieldsInjector`, for a
/// tracer's `extract` (the tests' servers read what a request carried with it).
public struct HTTPFieldsExtractor: Extractor {
    /// Creates the extractor; it has no state.
    public init() {}

    /// The value of field `key` (several values joined by ", "), or nil when absent.
    public func extract(key: String, from fields: HTTPFields) -> String? {
        guard let name = HTTPField.Name(key) else { return nil }
        return fields[name]
    }
}
