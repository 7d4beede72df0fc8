import Dispatch
import Foundation
import Glibc
@_spi(Testing) import UVNetworking

/// `cellular-fetch ROOT URL MODE...`: one GET of URL per MODE (`refused`: allowsCellularAccess
/// false; `allowed`: true; `default`: left as it is), interface kinds read from ROOT, a sysfs
/// tree of the test's own. Prints "MODE: status N" or "MODE: error CODE: DETAIL" per request,
/// then "fds ok" once the session is invalidated and its descriptors closed. Run by the tests
/// inside a client namespace whose links ROOT marks as cellular or not.
func cellularFetch(_ arguments: [String]) -> Never {
    guard arguments.count >= 3 else { finish(64, "usage: cellular-fetch ROOT URL MODE...") }
    ReachabilityTesting.interfaceRoot.withLock { $0 = arguments[0] }
    let url = URL(string: arguments[1])!
    // A first session warms what stays open for the process (Dispatch's descriptors, the shared
    // loop's), so the baseline counts only what the measured session opens.
    let warm = makeManager()
    _ = fetch(warm, "http://127.0.0.1:9/")
    warm.invalidateSessionCancelingTasks(true, resetSession: false)
    usleep(100_000)
    let baseline = openFileDescriptorCount()
    let manager = makeManager()
    for mode in arguments.dropFirst(2) {
        var request = Request(url: url, timeoutInterval: 10)
        switch mode {
        case "refused": request.allowsCellularAccess = false
        case "allowed": request.allowsCellularAccess = true
        case "default": break
        default: finish(64, "unknown mode \(mode)")
        }
        let done = DispatchSemaphore(value: 0)
        let line = LineBox()
        manager.dataTask(with: request, completionHandler: { response, _, error in
            let text = error.map { ($0 as? NetworkingError).map { "error \($0.code): \($0.detail)" } ?? "error \($0)" }
                ?? "status \(response?.status.code ?? 0)"
            line.set(text)
            done.signal()
        }).resume()
        guard done.wait(timeout: .now() + 20) == .success else { finish(2, "hang: no completion for \(mode)") }
        FileHandle.standardOutput.write(Data("\(mode): \(line.text)\n".utf8))
    }
    manager.invalidateSessionCancelingTasks(true, resetSession: false)
    guard eventually(5, { openFileDescriptorCount() <= baseline }) else { finish(1, "fds: baseline \(baseline), now \(openFileDescriptorCount())") }
    finish(0, "fds ok")
}

/// `peer-serve ADDRESS PORT`: accepts connections on ADDRESS:PORT (IPv4) until standard input
/// ends; for each, prints "peer ADDRESS" (who connected: which of the client's links it came
/// by), reads the request head and answers 200 "ok", closing the connection. Prints "listening
/// PORT" once it accepts.
func peerServe(_ arguments: [String]) -> Never {
    guard arguments.count == 2, let port = UInt16(arguments[1]) else { finish(64, "usage: peer-serve ADDRESS PORT") }
    let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var reuse: Int32 = 1
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = inet_addr(arguments[0])
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard bound == 0, listen(listener, 16) == 0 else { finish(1, "cannot listen on \(arguments[0]):\(port): errno \(errno)") }
    let thread = Thread {
        while true {
            var peer = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let connection = withUnsafeMutablePointer(to: &peer) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { accept(listener, $0, &length) }
            }
            guard connection >= 0 else { continue }
            var text = [CChar](repeating: 0, count: 64)
            inet_ntop(AF_INET, &peer.sin_addr, &text, socklen_t(text.count))
            let name = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            FileHandle.standardOutput.write(Data("peer \(name)\n".utf8))
            var head: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !head.suffix(4).elementsEqual([13, 10, 13, 10]) {
                let count = read(connection, &buffer, buffer.count)
                if count <= 0 { break }
                head += buffer[..<count]
            }
            let answer = Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok".utf8)
            _ = write(connection, answer, answer.count)
            close(connection)
        }
    }
    thread.start()
    FileHandle.standardOutput.write(Data("listening \(port)\n".utf8))
    while readLine() != nil {}
    finish(0, "ok")
}

/// One completion's line, handed from the completion queue to the probe's thread.
final class LineBox: @unchecked Sendable {
    // @unchecked: `value` is guarded by `lock`.
    private let lock = NSLock()
    private var value = ""
    func set(_ text: String) { lock.lock(); value = text; lock.unlock() }
    var text: String { lock.lock(); defer { lock.unlock() }; return value }
}
