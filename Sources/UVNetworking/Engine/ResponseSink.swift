import Foundation
import UVHTTP1

/// Where a task's response body goes: memory for the serializer, an async stream, a download's
/// file, or nowhere (counted and dropped). Chosen once, when the task's runner is made; the
/// runner hands every decoded body chunk of the task's response to it and never asks which it
/// is. A redirect's body, or the body of a response a download drops, never reaches it.
/// Loop-confined, like its runner.
protocol ResponseSink {
    /// The task's response head arrived, announcing `bodyLength` bytes (nil when unknown).
    mutating func receivedHead(_ head: ResponseHead, bodyLength: Int64?, runner: TaskRunner) -> ResponseSinkHeadDecision
    /// Decoded body bytes, valid only during the call.
    mutating func receive(_ bytes: UnsafeRawBufferPointer, task: SessionTask) -> ResponseSinkReceipt
    /// Whether the consumer is still behind (a notice that it drained may be stale).
    var isBehind: Bool { get }
    /// The exchange is sent again on a fresh connection: forget what it delivered.
    mutating func exchangeRestarted(task: SessionTask)
    /// Whether what it took of a response can be forgotten (`exchangeRestarted`) for another
    /// attempt: false once bytes left for the caller (a stream's reader, a download's file).
    var restartsAfterHead: Bool { get }
    /// Hands over the body kept for the serializer (empty unless kept in memory). Mutating, so
    /// that it is moved out of the runner in place rather than through a copy of the sink.
    mutating func takeBody() -> Data
    /// The task ends (`error` nil: the body is complete). Returns false when the sink ends the
    /// task itself, later (a download's file closes on a worker first).
    mutating func taskEnded(_ error: NetworkingError?, runner: TaskRunner) -> Bool
}

/// What a sink makes of the task's response head.
enum ResponseSinkHeadDecision {
    /// Take the body; progress runs up to `expectedLength` (nil when unknown).
    case accept(expectedLength: Int64?)
    /// Drop this response and send the request again without Range when it ends.
    case restart
    /// The task fails: the response cannot be used.
    case fail(NetworkingError)
}

/// What a sink did with body bytes.
enum ResponseSinkReceipt {
    /// Taken; they count towards progress.
    case taken
    /// Taken, and the consumer is behind: stop reading until it drains.
    case behind
    /// Not the body (a download's file is already complete): they do not count.
    case dropped
}

/// The body kept in memory, for the serializer. `Data` keeps up to 14 bytes inline, so a small
/// body costs no allocation, and goes to the serializer without a copy.
struct BufferSink: ResponseSink {
    private var body = Data()

    mutating func receivedHead(_ head: ResponseHead, bodyLength: Int64?, runner: TaskRunner) -> ResponseSinkHeadDecision {
        // Large bodies grow in place once.
        if let bodyLength, bodyLength > 64 * 1024 { body.reserveCapacity(Int(min(bodyLength, 1 << 26))) }
        return .accept(expectedLength: bodyLength)
    }

    mutating func receive(_ bytes: UnsafeRawBufferPointer, task: SessionTask) -> ResponseSinkReceipt {
        if let base = bytes.baseAddress, !bytes.isEmpty { body.append(base.assumingMemoryBound(to: UInt8.self), count: bytes.count) }
        return .taken
    }

    var isBehind: Bool { false }
    mutating func exchangeRestarted(task: SessionTask) { body = Data() }
    var restartsAfterHead: Bool { true }

    mutating func takeBody() -> Data {
        defer { body = Data() }
        return body
    }

    mutating func taskEnded(_ error: NetworkingError?, runner: TaskRunner) -> Bool { true }
}

/// `SessionTask.discardsResponseBody`: the body is counted, never kept.
struct DiscardSink: ResponseSink {
    mutating func receivedHead(_ head: ResponseHead, bodyLength: Int64?, runner: TaskRunner) -> ResponseSinkHeadDecision {
        .accept(expectedLength: bodyLength)
    }

    mutating func receive(_ bytes: UnsafeRawBufferPointer, task: SessionTask) -> ResponseSinkReceipt {
        task.recordDiscarded(bytes.count)
        return .taken
    }

    var isBehind: Bool { false }
    mutating func exchangeRestarted(task: SessionTask) { task.recordDiscarded(nil) }
    var restartsAfterHead: Bool { true }
    mutating func takeBody() -> Data { Data() }
    mutating func taskEnded(_ error: NetworkingError?, runner: TaskRunner) -> Bool { true }
}

/// `SessionManager.bytes(for:)`: the head, each chunk and the end go to the stream's buffer.
struct StreamSink: ResponseSink {
    let buffer: BodyStreamBuffer

    mutating func receivedHead(_ head: ResponseHead, bodyLength: Int64?, runner: TaskRunner) -> ResponseSinkHeadDecision {
        buffer.receivedHead(head)
        return .accept(expectedLength: bodyLength)
    }

    mutating func receive(_ bytes: UnsafeRawBufferPointer, task: SessionTask) -> ResponseSinkReceipt {
        guard !bytes.isEmpty else { return .taken }
        return buffer.push(Array(bytes)) ? .behind : .taken
    }

    var isBehind: Bool { buffer.isProducerPaused }
    mutating func exchangeRestarted(task: SessionTask) {}
    /// The head went to the stream's reader as it arrived.
    var restartsAfterHead: Bool { false }
    mutating func takeBody() -> Data { Data() }

    mutating func taskEnded(_ error: NetworkingError?, runner: TaskRunner) -> Bool {
        buffer.finish(error: error)
        return true
    }
}
