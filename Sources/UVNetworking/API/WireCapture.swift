import Foundation
import Synchronization

/// Keeps the bytes of a request's HTTP exchanges as they crossed the wire (`WireExchange`), for
/// an archive (WARC), a debugger or a test. Opt-in per request (`Request.wireCapture`); a
/// request without one pays a nil check per read and write.
///
/// The loop thread appends to it while the task runs; read `exchanges` once the task has
/// completed (in its completion handler, or after `await`), when every byte is in. Reading
/// earlier is safe (a lock guards the bytes) but shows a part. One capture per task: tasks made
/// from one `Request` value share its capture, and their exchanges then mix in it.
///
/// Memory is bounded by `limit`: each request and each response keeps at most that many bytes;
/// past it the rest is left out and the exchange marked truncated.
public final class WireCapture: Sendable {
    /// The most bytes kept of one request and of one response.
    public let limit: Int
    private let recorded = Mutex<[WireExchange]>([])

    /// A capture that keeps at most `limit` bytes of each request and of each response
    /// (default 64 MiB).
    public init(limit: Int = 64 << 20) {
        self.limit = max(0, limit)
    }

    /// The exchanges so far, in the order their requests were sent.
    public var exchanges: [WireExchange] { recorded.withLock { $0 } }

    // MARK: Recording (loop thread)

    /// Starts an exchange and returns its recorder.
    func begin(url: URL, remoteAddress: String?, protocolName: String = "http/1.1") -> WireExchangeRecorder {
        var exchange = WireExchange(url: url, remoteAddress: remoteAddress, startDate: Date())
        exchange.protocolName = protocolName
        let index = recorded.withLock { exchanges in
            exchanges.append(exchange)
            return exchanges.count - 1
        }
        return WireExchangeRecorder(capture: self, index: index)
    }

    func appendRequest(_ bytes: UnsafeRawBufferPointer, at index: Int) {
        recorded.withLock { $0[index].appendRequest(bytes, limit: limit) }
    }

    func appendResponse(_ bytes: UnsafeRawBufferPointer, at index: Int) {
        recorded.withLock { $0[index].appendResponse(bytes, limit: limit) }
    }

    func markComplete(at index: Int) {
        recorded.withLock { $0[index].isComplete = true }
    }
}
