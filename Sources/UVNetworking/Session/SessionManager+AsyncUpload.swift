import Foundation

/// async/await uploads of a streamed body (see `StreamedBody`, and for bodies from an
/// `AsyncSequence` `StreamedBody(length:bufferLimit:makeSequence:)`).
extension SessionManager {
    /// Sends `request` with `body` as its body (replacing the request's own) and returns the
    /// response, its body and the object `responseSerializer` made from them, like
    /// `data(for:)`: errors, cancellation and threads are as described there. A body that fails
    /// (its sequence throws, or breaks its declared length) throws `bodyStreamFailed`.
    public func upload(for request: Request, body: StreamedBody) async throws -> DataResponse {
        var request = request
        request.bodyStream = body
        return try await data(for: request)
    }
}
