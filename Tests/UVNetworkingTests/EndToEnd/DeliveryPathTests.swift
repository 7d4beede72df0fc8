import Dispatch
import Foundation
import HTTPTypes
import Synchronization
import Testing
@testable import UVNetworking

/// Where a finished task's serializer and handlers run: on the worker pool only when the batch
/// needs real work, on the completion queue otherwise, on the loop with `deliversOnEventLoop`.
extension EndToEnd {
    @Suite(.tags(.nginx)) struct DeliveryPath {
        /// Where a serializer ran, and on which queue.
        struct Place: Sendable, Equatable {
            var onCompletionQueue: Bool
            var onLoopThread: Bool
        }

        /// Where a serializer ran, call after call.
        final class PlaceLog: Sendable {
            private let places = Mutex<[Place]>([])
            func append(_ place: Place) { places.withLock { $0.append(place) } }
            var all: [Place] { places.withLock { $0 } }
        }

        /// Records where it runs; returns the body as HTTPResponseSerializer does (status unchecked).
        struct RecordingSerializer: ResponseSerializer {
            let needsWorkerThread: Bool
            let key: DispatchSpecificKey<Int>
            let places: PlaceLog

            func responseObject(for response: HTTPResponse, data: Data?) throws -> Any? {
                let place = Place(onCompletionQueue: DispatchQueue.getSpecific(key: key) == 1,
                                  onLoopThread: EventLoop.onAnyLoopThread)
                places.append(place)
                return data ?? Data()
            }
        }

        /// A harness whose completion queue is marked with `key`.
        private func harness(key: DispatchSpecificKey<Int>, wire: Wire = .http1_1,
                             _ configure: (inout SessionConfiguration) -> Void = { _ in }) -> ClientHarness {
            let harness = wire.harness(configure)
            harness.queue.setSpecific(key: key, value: 1)
            return harness
        }

        @Test func aSerializerThatNeedsNoWorkerRunsOnTheCompletionQueue() throws {
            let nginx = try TestServers.nginx()
            let key = DispatchSpecificKey<Int>()
            let harness = harness(key: key)
            let places = PlaceLog()
            harness.manager.responseSerializer = RecordingSerializer(needsWorkerThread: false, key: key, places: places)
            for _ in 0..<3 {
                let outcome = harness.fetch(nginx.baseURL + "/hello")
                #expect(outcome.text == NginxServer.helloBody)
            }
            #expect(places.all == Array(repeating: Place(onCompletionQueue: true, onLoopThread: false), count: 3))
            harness.finish()
        }

        @Test func aSerializerThatNeedsAWorkerRunsOnTheWorkerPool() throws {
            let nginx = try TestServers.nginx()
            let key = DispatchSpecificKey<Int>()
            let harness = harness(key: key)
            let places = PlaceLog()
            harness.manager.responseSerializer = RecordingSerializer(needsWorkerThread: true, key: key, places: places)
            #expect(harness.fetch(nginx.baseURL + "/hello").text == NginxServer.helloBody)
            #expect(places.all == [Place(onCompletionQueue: false, onLoopThread: false)])
            harness.finish()
        }

        /// The manager's HTTPResponseSerializer validates with the head's status code (not
        /// `HTTPResponse.status`): the same verdicts, with the default range and with a set.
        @Test(arguments: [false, true])
        func anHTTPResponseSerializerOfTheManagerValidatesTheStatus(onLoop: Bool) throws {
            let nginx = try TestServers.nginx()
            let harness = ClientHarness()
            harness.manager.deliversOnEventLoop = onLoop
            harness.manager.responseSerializer = HTTPResponseSerializer()
            #expect(harness.fetch(nginx.baseURL + "/hello").text == NginxServer.helloBody)
            let missing = harness.fetch(nginx.baseURL + "/missing")
            #expect(missing.code == .unacceptableStatusCode)
            #expect((missing.error as? NetworkingError)?.response?.status.code == 404)
            #expect((missing.error as? NetworkingError)?.errorDescription?.contains("(404)") == true)
            var only404 = HTTPResponseSerializer()
            only404.acceptableStatusCodes = IndexSet(integer: 404)
            harness.manager.responseSerializer = only404
            #expect(harness.fetch(nginx.baseURL + "/missing").error == nil)
            #expect(harness.fetch(nginx.baseURL + "/hello").code == .unacceptableStatusCode)
            harness.finish()
        }

        @Test func theSerializersSayWhetherTheyNeedAWorker() {
            #expect(!HTTPResponseSerializer().needsWorkerThread)
            #expect(JSONResponseSerializer().needsWorkerThread)
            #expect(PropertyListResponseSerializer().needsWorkerThread)
            #expect(XMLParserResponseSerializer().needsWorkerThread)
            #expect(DecodableResponseSerializer([Int].self).needsWorkerThread)
            #expect(AcceptAllSerializer().needsWorkerThread)
            #expect(!CompoundResponseSerializer([HTTPResponseSerializer()]).needsWorkerThread)
            #expect(CompoundResponseSerializer([HTTPResponseSerializer(), JSONResponseSerializer()]).needsWorkerThread)
        }

        @Test(arguments: Wire.allCases) func cookiesAreStoredOnAWorkerBeforeTheCompletionRuns(_ wire: Wire) throws {
            let base = try wire.httpbinBaseURL()
            let key = DispatchSpecificKey<Int>()
            let store = CookieStore()
            let harness = harness(key: key, wire: wire) { $0.cookieStore = store }
            let places = PlaceLog()
            harness.manager.responseSerializer = RecordingSerializer(needsWorkerThread: false, key: key, places: places)
            let seenInHandler = Mutex<[String]?>(nil)
            let done = DispatchSemaphore(value: 0)
            let url = base + "/response-headers?Set-Cookie=flavor%3Dmint%3B%20Path%3D%2F"
            harness.manager.dataTask(with: ClientHarness.request(url), completionHandler: { response, _, _ in
                seenInHandler.withLock { $0 = store.allCookies.map(\.description) }
                done.signal()
            }).resume()
            #expect(done.wait(timeout: .now() + 10) == .success)
            #expect(seenInHandler.withLock { $0 } == ["flavor=mint"])
            // The Set-Cookie line was parsed off the completion queue: the batch went to a worker.
            #expect(places.all == [Place(onCompletionQueue: false, onLoopThread: false)])
            // Without Set-Cookie, the same session skips the worker.
            #expect(harness.fetch(base + "/get").status == 200)
            #expect(places.all.last == Place(onCompletionQueue: true, onLoopThread: false))
            harness.finish()
        }

        @Test func theCompletionGroupHoldsTheHandlerOnTheDirectPath() throws {
            let nginx = try TestServers.nginx()
            let harness = ClientHarness()
            harness.manager.responseSerializer = HTTPResponseSerializer()
            let group = DispatchGroup()
            harness.manager.completionGroup = group
            let enteredWhileRunning = Mutex<Bool?>(nil)
            let done = DispatchSemaphore(value: 0)
            harness.manager.dataTask(with: ClientHarness.request(nginx.baseURL + "/hello"), completionHandler: { _, _, _ in
                enteredWhileRunning.withLock { $0 = group.wait(timeout: .now()) == .timedOut }
                done.signal()
            }).resume()
            #expect(done.wait(timeout: .now() + 10) == .success)
            #expect(enteredWhileRunning.withLock { $0 } == true)
            #expect(group.wait(timeout: .now() + 10) == .success)
            harness.finish()
        }

        // MARK: deliversOnEventLoop

        @Test func onTheLoopCompletionsAndProgressRunOnTheLoopThread() throws {
            let nginx = try TestServers.nginx()
            let harness = ClientHarness()
            harness.manager.deliversOnEventLoop = true
            harness.manager.responseSerializer = HTTPResponseSerializer()
            let loop = harness.manager.loop
            let completionInLoop = Mutex<Bool?>(nil)
            let progressInLoop = Mutex<[Bool]>([])
            let done = DispatchSemaphore(value: 0)
            harness.manager.dataTask(with: ClientHarness.request(nginx.baseURL + "/large"), downloadProgress: { _ in
                progressInLoop.withLock { $0.append(loop.inLoop) }
            }, completionHandler: { _, object, error in
                completionInLoop.withLock { $0 = loop.inLoop && error == nil && (object as? Data)?.count == NginxServer.largeSize }
                done.signal()
            }).resume()
            #expect(done.wait(timeout: .now() + 10) == .success)
            #expect(completionInLoop.withLock { $0 } == true)
            let progress = progressInLoop.withLock { $0 }
            #expect(!progress.isEmpty && progress.allSatisfy { $0 })
            harness.finish()
        }

        @Test func onTheLoopAResumeFromACompletionStartsInline() throws {
            let nginx = try TestServers.nginx()
            let harness = ClientHarness()
            harness.manager.deliversOnEventLoop = true
            harness.manager.responseSerializer = HTTPResponseSerializer()
            let manager = harness.manager
            let startedInline = Mutex<Bool?>(nil)
            let done = DispatchSemaphore(value: 0)
            let request = ClientHarness.request(nginx.baseURL + "/hello")
            manager.dataTask(with: request, completionHandler: { _, _, _ in
                let next = manager.dataTask(with: request, completionHandler: { _, object, _ in
                    #expect((object as? Data).map { String(decoding: $0, as: UTF8.self) } == NginxServer.helloBody)
                    done.signal()
                })
                next.resume()
                // On the loop thread: the runner exists once resume() returns, no job in between.
                startedInline.withLock { $0 = next.loopPhase == .running && next.loopRunner != nil }
            }).resume()
            #expect(done.wait(timeout: .now() + 10) == .success)
            #expect(startedInline.withLock { $0 } == true)
            harness.finish()
        }

        @Test func onTheLoopASerializerThatNeedsAWorkerStillRunsOffTheLoop() throws {
            let nginx = try TestServers.nginx()
            let key = DispatchSpecificKey<Int>()
            let harness = harness(key: key)
            harness.manager.deliversOnEventLoop = true
            let places = PlaceLog()
            harness.manager.responseSerializer = RecordingSerializer(needsWorkerThread: true, key: key, places: places)
            let loop = harness.manager.loop
            let completionInLoop = Mutex<Bool?>(nil)
            let done = DispatchSemaphore(value: 0)
            harness.manager.dataTask(with: ClientHarness.request(nginx.baseURL + "/hello"), completionHandler: { _, object, _ in
                completionInLoop.withLock { $0 = loop.inLoop && (object as? Data)?.count == 12 }
                done.signal()
            }).resume()
            #expect(done.wait(timeout: .now() + 10) == .success)
            #expect(places.all == [Place(onCompletionQueue: false, onLoopThread: false)])
            #expect(completionInLoop.withLock { $0 } == true)

            // A serializer that needs no worker runs on the loop, never on the completion queue.
            harness.manager.responseSerializer = RecordingSerializer(needsWorkerThread: false, key: key, places: places)
            #expect(harness.fetch(nginx.baseURL + "/hello").status == 200)
            #expect(places.all.last == Place(onCompletionQueue: false, onLoopThread: true))
            harness.finish()
        }

        @Test func onTheLoopTheCompletionGroupHoldsEveryHandler() throws {
            let nginx = try TestServers.nginx()
            let harness = ClientHarness()
            harness.manager.deliversOnEventLoop = true
            harness.manager.responseSerializer = HTTPResponseSerializer()
            let group = DispatchGroup()
            harness.manager.completionGroup = group
            let completed = Mutex(0)
            let heldEveryTime = Mutex(true)
            for _ in 0..<20 {
                harness.manager.dataTask(with: ClientHarness.request(nginx.baseURL + "/hello"), completionHandler: { _, _, _ in
                    // Inside the group while it runs (a zero-timeout wait does not block the loop).
                    let held = group.wait(timeout: .now()) == .timedOut
                    heldEveryTime.withLock { $0 = $0 && held }
                    completed.withLock { $0 += 1 }
                }).resume()
            }
            #expect(completionsCountedWhenGroupNotifies(harness.manager, group, { completed.withLock { $0 } }) == 20)
            #expect(heldEveryTime.withLock { $0 })
            harness.finish()
        }

        @Test func theLoopThreadIsKnownForTheBlockingCallChecks() {
            #expect(!EventLoop.onAnyLoopThread)
            let seen = Mutex<Bool?>(nil)
            let done = DispatchSemaphore(value: 0)
            EventLoop.shared.execute {
                seen.withLock { $0 = EventLoop.onAnyLoopThread }
                done.signal()
            }
            #expect(done.wait(timeout: .now() + 10) == .success)
            #expect(seen.withLock { $0 } == true)
        }
    }
}
