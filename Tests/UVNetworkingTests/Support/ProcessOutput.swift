import Foundation
import Glibc
import Synchronization

/// What a child process writes to a pipe, read by a thread of blocking reads that owns the
/// pipe's read end: every byte is taken as soon as it is written, whatever Dispatch's queues
/// are doing on a loaded machine, so once end of file is seen the output is whole. (A
/// readability handler, read a chunk per event, was found short of its last lines after the
/// process had exited, on a CI machine running seven test processes on two cores.) Read as it
/// comes (`text`), or whole at the end (`wait()`).
final class ProcessOutput: Sendable {
    private let data = Mutex(Data())
    /// Left when the pipe ends.
    private let reading = DispatchGroup()

    /// Starts reading `handle` (a pipe's read end) until end of file; call once the process was
    /// started (the parent's write end is closed by then, so end of file comes when the
    /// process's goes).
    init(reading handle: FileHandle) {
        reading.enter()
        Thread.detachNewThread { [self] in
            let descriptor = handle.fileDescriptor
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count > 0 {
                    data.withLock { $0.append(contentsOf: buffer[0..<count]) }
                } else if count < 0 && errno == EINTR {
                    continue
                } else {
                    break
                }
            }
            try? handle.close()
            reading.leave()
        }
    }

    /// Everything read so far.
    var text: String { data.withLock { String(decoding: $0, as: UTF8.self) } }

    /// Waits for end of file, which comes once no process holds the write end: a descendant
    /// that outlived the process would, so the wait is bounded. Whether it came.
    @discardableResult
    func waitForEnd(timeout: Double = 15) -> Bool {
        reading.wait(timeout: .now() + timeout) == .success
    }

    /// Everything, once end of file came (however long that takes).
    func wait() -> Data {
        reading.wait()
        return data.withLock { $0 }
    }
}
