import CDNSBench
import Foundation
import Glibc

// The three resolvers. Their state is global: libuv's and c-ares's callbacks are C functions.

nonisolated(unsafe) var nextName = 0

private final class UVRequest {
    let index: Int
    init(_ index: Int) { self.index = index }
}

/// uv_getaddrinfo for the next name; its callback starts the one after.
func uvStartOne() {
    guard nextName < names.count else { return }
    let index = nextName
    nextName += 1
    let request = UnsafeMutablePointer<uv_getaddrinfo_t>.allocate(capacity: 1)
    request.pointee.data = Unmanaged.passRetained(UVRequest(index)).toOpaque()
    var hints = addrinfo()
    hints.ai_family = AF_UNSPEC
    hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
    uv_getaddrinfo(uv_default_loop(), request, { request, status, result in
        let index = Unmanaged<UVRequest>.fromOpaque(request!.pointee.data).takeRetainedValue().index
        if let result { uv_freeaddrinfo(result) }
        request!.deallocate()
        tally.finished(index, ok: status == 0, slowCount: slowCount)
        if allDone() { uv_stop(uv_default_loop()) } else { uvStartOne() }
    }, names[index], nil, &hints)
}

// c-ares on libuv: a poll handle per c-ares socket, one timer.
nonisolated(unsafe) var caresChannel: OpaquePointer?
nonisolated(unsafe) var caresPolls: [Int32: UnsafeMutablePointer<uv_poll_t>] = [:]
nonisolated(unsafe) let caresTimer = UnsafeMutablePointer<uv_timer_t>.allocate(capacity: 1)

func caresStart() {
    ares_library_init(ARES_LIB_INIT_ALL)
    uv_timer_init(uv_default_loop(), caresTimer)
    var options = ares_options()
    options.sock_state_cb = { _, fd, readable, writable in
        if readable == 0 && writable == 0 {
            if let poll = caresPolls.removeValue(forKey: fd) {
                uv_poll_stop(poll)
                poll.withMemoryRebound(to: uv_handle_t.self, capacity: 1) { handle in
                    uv_close(handle) { $0!.withMemoryRebound(to: uv_poll_t.self, capacity: 1) { $0.deallocate() } }
                }
            }
            return
        }
        let poll: UnsafeMutablePointer<uv_poll_t>
        if let existing = caresPolls[fd] { poll = existing } else {
            poll = .allocate(capacity: 1)
            uv_poll_init_socket(uv_default_loop(), poll, fd)
            caresPolls[fd] = poll
        }
        let events = (readable != 0 ? Int32(UV_READABLE.rawValue) : 0) | (writable != 0 ? Int32(UV_WRITABLE.rawValue) : 0)
        uv_poll_start(poll, events) { poll, status, events in
            var fd: uv_os_fd_t = -1
            poll!.withMemoryRebound(to: uv_handle_t.self, capacity: 1) { _ = uv_fileno($0, &fd) }
            let readable = status < 0 || events & Int32(UV_READABLE.rawValue) != 0
            let writable = status < 0 || events & Int32(UV_WRITABLE.rawValue) != 0
            ares_process_fd(caresChannel, readable ? fd : ARES_SOCKET_BAD, writable ? fd : ARES_SOCKET_BAD)
            caresRearm()
        }
    }
    let status = "b".withCString { lookups -> Int32 in
        options.lookups = UnsafeMutablePointer(mutating: lookups)
        return ares_init_options(&caresChannel, &options, ARES_OPT_SOCK_STATE_CB | ARES_OPT_LOOKUPS)
    }
    guard status == ARES_SUCCESS else {
        print("ares_init_options: \(status)")
        exit(1)
    }
}

func caresRearm() {
    var next = timeval()
    guard ares_timeout(caresChannel, nil, &next) != nil else {
        uv_timer_stop(caresTimer)
        return
    }
    let milliseconds = UInt64(next.tv_sec) * 1000 + UInt64(next.tv_usec + 999) / 1000
    uv_timer_start(caresTimer, { _ in
        ares_process_fd(caresChannel, ARES_SOCKET_BAD, ARES_SOCKET_BAD)
        caresRearm()
    }, milliseconds, 0)
}

func caresStartOne() {
    guard nextName < names.count else { return }
    let index = nextName
    nextName += 1
    var hints = ares_addrinfo_hints()
    hints.ai_family = AF_UNSPEC
    hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
    ares_getaddrinfo(caresChannel, names[index], nil, &hints, { arg, status, _, result in
        let index = Int(bitPattern: arg)
        if let result { ares_freeaddrinfo(result) }
        tally.finished(index, ok: status == ARES_SUCCESS, slowCount: slowCount)
        if allDone() { uv_stop(uv_default_loop()) } else { caresStartOne() }
    }, UnsafeMutableRawPointer(bitPattern: index))
}
