import Dispatch
import Foundation
import HTTPTypes
import LoopbackHTTPServer
import Synchronization
import Testing
import UVNetworking

/// One GET made the way a user makes it: a default session on the shared loop, a plain http URL,
/// a 200 with a small body, a serializer that only validates. Besides checking that path, it is
/// what scripts/files-a-get-crosses.sh runs alone under coverage to count the library's files a
/// request passes through (docs/architecture.md, "Folders").
@Suite(.tags(.loopback)) struct OneGET {
    @Test func aDefaultSessionGetsOnePage() throws {
        let server = LoopbackHTTPServer()
        let port = try server.start()
        defer { server.stop() }
        let manager = SessionManager()
        manager.completionQueue = DispatchQueue(label: "test.one-get.completions")
        manager.responseSerializer = HTTPResponseSerializer()
        let result = Mutex<(status: Int?, body: Data?, error: String?)>((nil, nil, nil))
        let done = DispatchSemaphore(value: 0)
        let task = manager.dataTask(with: Request(url: URL(string: "http://127.0.0.1:\(port)/items/7")!)) { response, object, error in
            result.withLock { $0 = (response?.status.code, object as? Data, error.map { "\($0)" }) }
            done.signal()
        }
        task.resume()
        #expect(done.wait(timeout: .now() + 10) == .success)
        let (status, body, error) = result.withLock { $0 }
        #expect(error == nil)
        #expect(status == 200)
        #expect(body.map { String(decoding: $0, as: UTF8.self).hasPrefix("item 7\n") } == true)
        manager.invalidateSessionCancelingTasks(true, resetSession: false)
    }
}
