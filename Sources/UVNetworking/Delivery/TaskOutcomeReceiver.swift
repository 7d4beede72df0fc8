import Foundation
import HTTPTypes
import Synchronization

/// Takes a finished task's outcome on the worker thread, in place of the completion handler.
/// `CompletionDelivery` calls it once per task, after `resolveResponse()`.
protocol TaskOutcomeReceiver: AnyObject, Sendable {
    func receive(_ finished: SessionEngine.FinishedTask, serializer: any ResponseSerializer)
}

/// The outcome of one task for one awaiting caller: the response is turned into a `Value` on the
/// worker (serializing or decoding there), then handed to the continuation. The outcome may
/// arrive before the caller waits (a task cancelled before it started finishes at once).
final class AsyncTaskOutcome<Value: Sendable>: TaskOutcomeReceiver {
    typealias Make = @Sendable (HTTPResponse, Data, any ResponseSerializer, TaskMetrics?) throws -> Value

    private enum State {
        case pending
        case waiting(CheckedContinuation<Value, any Error>)
        case ready(Result<Value, any Error>)
        case delivered
    }

    private let make: Make
    private let state = Mutex(State.pending)

    init(_ make: @escaping Make) {
        self.make = make
    }

    /// An outcome handed over whole with `deliver` (a download's file), never made from a body.
    convenience init() {
        self.init { _, _, _, _ in throw NetworkingError(.serializationFailed, "this outcome is not made from a body") }
    }

    func receive(_ finished: SessionEngine.FinishedTask, serializer: any ResponseSerializer) {
        let result: Result<Value, any Error>
        if let error = finished.error {
            result = .failure(error)
        } else if let response = finished.response {
            let data = finished.body
            do {
                result = .success(try make(response, data, serializer, finished.hooks?.metrics))
            } catch var error as NetworkingError {
                error.failingURL = error.failingURL ?? finished.task.originalRequest.url
                result = .failure(error)
            } catch {
                result = .failure(error)
            }
        } else {
            result = .failure(NetworkingError(.malformedResponse, "the task ended without a response"))
        }
        deliver(result)
    }

    /// Hands `result` to the caller, now or when it waits. Called once per task.
    func deliver(_ result: Result<Value, any Error>) {
        let waiter = state.withLock { state -> CheckedContinuation<Value, any Error>? in
            switch state {
            case .pending:
                state = .ready(result)
                return nil
            case .waiting(let continuation):
                state = .delivered
                return continuation
            case .ready, .delivered:
                preconditionFailure("a task's outcome was delivered twice")
            }
        }
        waiter?.resume(with: result)
    }

    /// The value, once the task has finished.
    func value() async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            let ready = state.withLock { state -> Result<Value, any Error>? in
                switch state {
                case .pending:
                    state = .waiting(continuation)
                    return nil
                case .ready(let result):
                    state = .delivered
                    return result
                case .waiting, .delivered:
                    preconditionFailure("a task's outcome was awaited twice")
                }
            }
            if let ready { continuation.resume(with: ready) }
        }
    }
}
