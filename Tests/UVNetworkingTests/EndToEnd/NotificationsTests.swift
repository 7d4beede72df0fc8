import Dispatch
import Foundation
import Synchronization
import Testing
@testable import UVNetworking

/// Watches one task's notifications on NotificationCenter.default.
private final class TaskNotificationWatcher: @unchecked Sendable {
    // @unchecked: `tokens` is written in init and read in `stop`, on the test's thread.
    struct Seen: @unchecked Sendable {
        // @unchecked: userInfo values are read by the test after the post.
        var name: Notification.Name
        var onMain: Bool
        var userInfo: [AnyHashable: Any]
        var handlerHadRun: Bool
    }

    private let seen = Recorder<Seen>()
    private var tokens: [NSObjectProtocol] = []

    init(task: SessionTask, handlerRan: @escaping @Sendable () -> Bool) {
        for name in [Notification.Name.networkingTaskDidResume, .networkingTaskDidSuspend, .networkingTaskDidComplete] {
            tokens.append(NotificationCenter.default.addObserver(forName: name, object: task, queue: nil) { [seen] note in
                let entry = Seen(name: note.name, onMain: DispatchQueue.getSpecific(key: mainKey) == true,
                                 userInfo: note.userInfo ?? [:], handlerHadRun: handlerRan())
                seen.append(entry)
            })
        }
    }

    var all: [Seen] { seen.all }
    func names() -> [Notification.Name] { all.map(\.name) }

    func stop() {
        for token in tokens { NotificationCenter.default.removeObserver(token) }
    }
}

private let mainKey: DispatchSpecificKey<Bool> = {
    let key = DispatchSpecificKey<Bool>()
    DispatchQueue.main.setSpecific(key: key, value: true)
    return key
}()

/// Waits until everything queued on the main queue so far has run.
private func drainMainQueue() -> Bool {
    let done = DispatchSemaphore(value: 0)
    DispatchQueue.main.async { done.signal() }
    return done.wait(timeout: .now() + 10) == .success
}

/// A task for `url` whose notifications are watched; `done` is signalled by its completion
/// handler, and each notification records whether that handler had already run.
private func watchedTask(_ harness: ClientHarness, _ url: String) -> (task: DataTask, watcher: TaskNotificationWatcher, done: DispatchSemaphore) {
    _ = mainKey
    let handlerRan = Mutex(false)
    let done = DispatchSemaphore(value: 0)
    let task = harness.manager.dataTask(with: ClientHarness.request(url), completionHandler: { _, _, _ in
        handlerRan.withLock { $0 = true }
        done.signal()
    })
    return (task, TaskNotificationWatcher(task: task) { handlerRan.withLock { $0 } }, done)
}

extension EndToEnd {
    /// AFNetworking's task notifications: resume, suspend, complete.
    @Suite(.tags(.nginx)) struct TaskNotifications {
        @Test func resumeAndSuspendPostOnlyOnRealChanges() throws {
            // The server answers late, so the task cannot complete between the calls below even
            // on a loaded machine (with nginx it sometimes did, and the suspend found it done).
            let server = try ScriptedServer { connection in
                try connection.serveKeepAlive { _ in
                    connection.pause(0.3)
                    return ScriptedResponse.text("late")
                }
            }
            defer { server.stop() }
            let harness = ClientHarness()
            harness.manager.postsTaskNotifications = true
            let (task, watcher, done) = watchedTask(harness, "http://127.0.0.1:\(server.port)/")
            defer { watcher.stop() }
            task.suspend()          // already suspended: nothing
            task.resume()
            task.resume()           // already running: nothing
            task.suspend()
            task.suspend()          // already suspended: nothing
            task.resume()
            #expect(done.wait(timeout: .now() + 10) == .success)
            #expect(waitUntil(timeout: 5) { watcher.all.count == 4 })
            #expect(drainMainQueue())
            #expect(watcher.names() == [.networkingTaskDidResume, .networkingTaskDidSuspend, .networkingTaskDidResume,
                                        .networkingTaskDidComplete])
            #expect(watcher.all.allSatisfy { $0.onMain })
            // Resuming a completed task changes nothing and posts nothing.
            task.resume()
            #expect(drainMainQueue())
            #expect(watcher.all.count == 4)
            harness.finish()
        }

        @Test func didCompleteFollowsTheHandlerWithTheResponseKeys() throws {
            let nginx = try TestServers.nginx()
            let harness = ClientHarness()
            harness.manager.postsTaskNotifications = true
            let (task, watcher, done) = watchedTask(harness, nginx.baseURL + "/hello")
            defer { watcher.stop() }
            task.resume()
            #expect(done.wait(timeout: .now() + 10) == .success)
            #expect(waitUntil(timeout: 5) { watcher.names().contains(.networkingTaskDidComplete) })
            let complete = try #require(watcher.all.first { $0.name == .networkingTaskDidComplete })
            #expect(complete.handlerHadRun)
            #expect(complete.onMain)
            let info = complete.userInfo
            #expect(info[NetworkingTaskDidCompleteKey.responseSerializer] is AcceptAllSerializer)
            #expect(info[NetworkingTaskDidCompleteKey.responseData] as? Data == Data(NginxServer.helloBody.utf8))
            #expect(info[NetworkingTaskDidCompleteKey.serializedResponse] as? Data == Data(NginxServer.helloBody.utf8))
            #expect(info[NetworkingTaskDidCompleteKey.error] == nil)
            #expect(info[NetworkingTaskDidCompleteKey.assetPath] == nil)
            let metrics = try #require(info[NetworkingTaskDidCompleteKey.sessionTaskMetrics] as? TaskMetrics)
            #expect(metrics.taskInterval.duration >= 0 && metrics.taskInterval.duration < 5)
            harness.finish()
        }

        @Test func didCompleteCarriesTheErrorAndTheObjectOfARejectedStatus() throws {
            let nginx = try TestServers.nginx()
            let harness = ClientHarness()
            harness.manager.postsTaskNotifications = true
            harness.manager.responseSerializer = HTTPResponseSerializer()
            let (task, watcher, done) = watchedTask(harness, nginx.baseURL + "/missing")
            defer { watcher.stop() }
            task.resume()
            #expect(done.wait(timeout: .now() + 10) == .success)
            #expect(waitUntil(timeout: 5) { watcher.names().contains(.networkingTaskDidComplete) })
            let info = try #require(watcher.all.first { $0.name == .networkingTaskDidComplete }).userInfo
            #expect((info[NetworkingTaskDidCompleteKey.error] as? NetworkingError)?.code == .unacceptableStatusCode)
            #expect(info[NetworkingTaskDidCompleteKey.responseSerializer] is HTTPResponseSerializer)
            let data = try #require(info[NetworkingTaskDidCompleteKey.responseData] as? Data)
            #expect(String(decoding: data, as: UTF8.self).contains("404"))
            harness.finish()
        }

        @Test func nothingIsPostedByDefault() throws {
            let nginx = try TestServers.nginx()
            let harness = ClientHarness()
            _ = mainKey
            #expect(!harness.manager.postsTaskNotifications)
            let (task, wait) = harness.makeTask(ClientHarness.request(nginx.baseURL + "/hello"))
            let watcher = TaskNotificationWatcher(task: task) { true }
            defer { watcher.stop() }
            task.resume()
            #expect(wait(10)?.text == NginxServer.helloBody)
            #expect(drainMainQueue())
            #expect(watcher.all.isEmpty)
            harness.finish()
        }
    }
}
