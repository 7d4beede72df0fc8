import Dispatch
import Foundation
import HTTPTypes
import Synchronization
import Testing
@testable import UVNetworking
import UVHTTP1

/// CompletionDelivery without sockets: finished tasks are made by hand and run through it.
@Suite(.tags(.loopback)) struct CompletionDeliveryTests {
    private func deliver(status: Int, reason: String, contentType: String, body: String,
                         serializer: any ResponseSerializer) throws -> Outcome {
        let manager = SessionManager()
        defer { manager.invalidateSessionCancelingTasks(true, resetSession: false) }
        let received = Mutex<[Outcome]>([])
        let url = URL(string: "http://example.com/items")!
        let task = manager.dataTask(with: Request(url: url), completionHandler: { response, object, error in
            received.withLock { $0.append(Outcome(response: response, object: object, error: error)) }
        })
        let head = ResponseHead(versionMajor: 1, versionMinor: 1, status: status, reason: reason,
                                headers: [HeaderField(name: "Content-Type", value: contentType)], keepAlive: true)
        let group = DispatchGroup()
        let target = DeliveryTarget(queue: DispatchQueue(label: "uvnetworking.tests.delivery"), group: group, serializer: serializer)
        CompletionDelivery.run([SessionEngine.FinishedTask(task: task, head: head, body: Data(body.utf8), error: nil)], with: target)
        #expect(group.wait(timeout: .now() + 10) == .success)
        let outcomes = received.withLock { $0 }
        #expect(outcomes.count == 1)
        return try #require(outcomes.first)
    }

    @Test func clientErrorWithAJSONBodyDeliversObjectAndError() throws {
        let outcome = try deliver(status: 422, reason: "Unprocessable Entity", contentType: "application/json",
                                  body: #"{"field":"name"}"#, serializer: JSONResponseSerializer())
        #expect(outcome.status == 422)
        #expect((outcome.object as? [String: Any])?["field"] as? String == "name")
        let error = try #require(outcome.error as? NetworkingError)
        #expect(error.code == .unacceptableStatusCode)
        #expect(error.failingURL == URL(string: "http://example.com/items"))
        #expect(error.responseData == Data(#"{"field":"name"}"#.utf8))
    }

    @Test func rejectedContentTypeDeliversNoObject() throws {
        let outcome = try deliver(status: 200, reason: "OK", contentType: "text/html", body: "<p>",
                                  serializer: JSONResponseSerializer())
        #expect(outcome.object == nil)
        #expect(outcome.code == .unacceptableContentType)
    }

    @Test func successDeliversTheObjectAlone() throws {
        let outcome = try deliver(status: 200, reason: "OK", contentType: "application/json", body: "[1,2]",
                                  serializer: JSONResponseSerializer())
        #expect((outcome.object as? [Any])?.count == 2)
        #expect(outcome.error == nil)
    }

    /// Holds a task weakly across threads.
    private final class WeakTask: @unchecked Sendable {
        // @unchecked: written before the handlers run, read by them on the same thread.
        weak var task: SessionTask?
    }

    /// A batch's task is let go once its handler has run, before the next task's handler: its
    /// memory is then free for the task that handler makes, not held until the batch ends.
    @Test func aTaskIsReleasedRightAfterItsHandlerRan() {
        let manager = SessionManager()
        defer { manager.invalidateSessionCancelingTasks(true, resetSession: false) }
        let url = URL(string: "http://example.com/items")!
        let first = WeakTask()
        let firstGoneAtSecond = Mutex<Bool?>(nil)
        let head = ResponseHead(versionMajor: 1, versionMinor: 1, status: 200, reason: "OK", headers: [], keepAlive: true)
        var batch: [SessionEngine.FinishedTask] = []
        do {
            let one = manager.dataTask(with: Request(url: url), completionHandler: { _, _, _ in })
            let two = manager.dataTask(with: Request(url: url), completionHandler: { _, _, _ in
                firstGoneAtSecond.withLock { $0 = first.task == nil }
            })
            first.task = one
            // As the engine does before a batch is delivered: the registry lets them go.
            manager.taskFinished(one)
            manager.taskFinished(two)
            batch = [SessionEngine.FinishedTask(task: one, head: head, body: Data(), error: nil),
                     SessionEngine.FinishedTask(task: two, head: head, body: Data(), error: nil)]
        }
        let target = DeliveryTarget(queue: DispatchQueue(label: "uvnetworking.tests.delivery"), group: DispatchGroup(),
                                    serializer: HTTPResponseSerializer())
        CompletionDelivery.run(&batch, with: target, handlers: .here)
        #expect(firstGoneAtSecond.withLock { $0 } == true)
    }
}
