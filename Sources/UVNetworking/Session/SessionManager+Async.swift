import Foundation
import HTTPTypes

/// async/await.
///
/// Threads: the request runs on the loop like any task; the response is serialized (or decoded)
/// on the worker pool, and the awaiting caller is resumed from there. The completion queue and
/// group are not used: there is no handler to run on them.
///
/// Errors: the task's `NetworkingError` is thrown (a failed response's body is its
/// `responseData`, a serializer's object for it `responseObject`); errors a custom serializer
/// throws are thrown as they are.
///
/// Cancellation: cancelling the Swift task cancels the request, which then throws
/// `NetworkingError` with code `.cancelled` (never `CancellationError`), whether it was waiting
/// for a connection, sending, receiving, or not started yet. The request completes exactly once:
/// if it had already finished when the cancellation arrived, its result is returned.
extension SessionManager {
    /// Runs `request` and returns the response, its body and the object a response serializer
    /// made from them.
    ///
    /// `responseSerializer` serializes this call's response; nil (the default) uses the
    /// session's `responseSerializer`, which is `JSONResponseSerializer` unless changed. That
    /// one throws `.unacceptableContentType` for a non-empty body whose Content-Type is not
    /// JSON, and `.serializationFailed` for a JSON type whose body does not parse; for
    /// another kind of body pass `HTTPResponseSerializer()` (status checked, the body as it came,
    /// as `Data`), or any serializer, for this call alone.
    public func data(for request: Request, responseSerializer: (any ResponseSerializer)? = nil) async throws -> DataResponse {
        try await run(request) { response, data, sessionSerializer, metrics in
            let serializer = responseSerializer ?? sessionSerializer
            return DataResponse(response: response, data: data, value: try serializer.responseObject(for: response, data: data),
                                metrics: metrics)
        }
    }

    /// Runs `request` and decodes its body as `T` on the worker pool.
    ///
    /// The response is validated first with the status codes and content types of the manager's
    /// `responseSerializer` when it validates (`ValidatingResponseSerializer`,
    /// `HTTPResponseSerializer`), else with `JSONResponseSerializer`'s. A rejected response
    /// throws `.unacceptableStatusCode` or `.unacceptableContentType`; a body that does not
    /// decode (or is empty) throws `.serializationFailed` with the `DecodingError` as its
    /// underlying error.
    public func data<T: Decodable & Sendable>(for request: Request, as type: T.Type = T.self,
                                              decoder: JSONDecoder = JSONDecoder()) async throws -> T {
        try await run(request) { response, data, serializer, _ in
            try Self.decode(T.self, response: response, data: data, decoder: decoder, validatingLike: serializer)
        }
    }

    /// Starts `request` and returns as soon as the response head arrives, with the body as an
    /// `AsyncBodyStream` that reads from the connection as it is consumed (see there for
    /// backpressure and early exit).
    ///
    /// The status is not validated and `responseSerializer` is not used: check
    /// `response.status` yourself. Throws the task's `NetworkingError` if the request fails
    /// before the head, `.cancelled` if the Swift task is cancelled first.
    public func bytes(for request: Request) async throws -> (HTTPResponse, AsyncBodyStream) {
        let task = dataTask(with: request)
        let buffer = BodyStreamBuffer(task: task)
        task.bodyStream = buffer
        let head = try await withTaskCancellationHandler {
            task.resume()
            return try await buffer.head()
        } onCancel: {
            task.cancel()
        }
        let response = head.httpResponse
        task.cacheResponse(response)
        // Here, not at the end of the body: the caller may send the next request before it
        // reads the body, and that request should carry these cookies.
        task.storeCookies(from: response)
        return (response, AsyncBodyStream(buffer))
    }

    /// Runs a task whose outcome is turned into a value on the worker by `make`.
    func run<Value: Sendable>(_ request: Request, _ make: @escaping AsyncTaskOutcome<Value>.Make) async throws -> Value {
        let outcome = AsyncTaskOutcome(make)
        let task = dataTask(with: request)
        task.outcomeReceiver = outcome
        return try await withTaskCancellationHandler {
            // Already cancelled: the handler ran first and cancelled the task; resume is a no-op.
            task.resume()
            return try await outcome.value()
        } onCancel: {
            task.cancel()
        }
    }

    /// Validates like `serializer` would, then decodes the body.
    static func decode<T: Decodable>(_ type: T.Type, response: HTTPResponse, data: Data, decoder: JSONDecoder,
                                     validatingLike serializer: any ResponseSerializer) throws -> T {
        var decoding = DecodableResponseSerializer(T.self, decoder: decoder)
        if let validating = serializer as? any ValidatingResponseSerializer {
            decoding.validation = validating.validation
        } else if let plain = serializer as? HTTPResponseSerializer {
            decoding.validation = plain
        }
        guard let value = try decoding.responseObject(for: response, data: data) as? T else {
            throw NetworkingError(.serializationFailed, "the response has no body to decode as \(T.self)",
                                  response: response, responseData: data)
        }
        return value
    }
}
