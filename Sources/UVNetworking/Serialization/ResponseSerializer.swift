import Foundation
import HTTPTypes

/// Turns a response and its body into the object a completion handler receives. Runs on the
/// session's worker pool, never on the loop thread.
///
/// To deliver an object together with an error, as AFNetworking does when only the status code
/// was rejected, throw a `NetworkingError` whose `responseObject` is set.
public protocol ResponseSerializer: Sendable {
    /// The object for this response, or nil. Throwing fails the task with that error.
    func responseObject(for response: HTTPResponse, data: Data?) throws -> Any?
}
