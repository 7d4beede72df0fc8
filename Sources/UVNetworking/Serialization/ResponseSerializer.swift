import Foundation
import HTTPTypes

/// Turns a response and its body into the object a completion handler receives. A serializer
/// that does real work (parsing, decoding) runs on the session's worker pool, never on the loop
/// thread; one that only looks at the response (`needsWorkerThread` false) runs where the
/// completion handler runs, which saves a thread hand-off per batch of responses.
///
/// To deliver an object together with an error, as AFNetworking does when only the status code
/// was rejected, throw a `NetworkingError` whose `responseObject` is set.
public protocol ResponseSerializer: Sendable {
    /// The object for this response, or nil. Throwing fails the task with that error.
    func responseObject(for response: HTTPResponse, data: Data?) throws -> Any?

    /// Whether `responseObject` does work that must not hold up the thread that calls completion
    /// handlers (or the event loop, with `SessionManager.deliversOnEventLoop`): parsing, decoding,
    /// anything that grows with the body. Then it runs on the session's worker pool, as every
    /// serializer did before; that is the default. Say false only for a serializer whose cost does
    /// not depend on the body and that never blocks (`HTTPResponseSerializer`: validation only).
    var needsWorkerThread: Bool { get }

    /// MIME types accepted (compared case-insensitively, parameters ignored); nil accepts any.
    /// Requirements (not extension members) so that `manager.responseSerializer.acceptableContentTypes
    /// = [...]` works on the session's `any ResponseSerializer`, as AFNetworking users write it.
    ///
    /// Every serializer of this library has them; a `ValidatingResponseSerializer` gets them from
    /// its `validation`. A serializer that validates nothing itself and declares neither gets
    /// the defaults of `NonValidatingResponseSerializer.swift`: it reports that it accepts
    /// anything, and setting either has no effect.
    var acceptableContentTypes: Set<String>? { get set }

    /// Status codes that count as success; see `acceptableContentTypes`.
    var acceptableStatusCodes: IndexSet { get set }
}

extension ResponseSerializer {
    /// True: a serializer runs on the worker pool unless it says otherwise.
    public var needsWorkerThread: Bool { true }
}
