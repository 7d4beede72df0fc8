/// Why an event loop could not start: the libuv call that failed and its status. The loop's only
/// error of its own (a loop shut down later is the session's to report); the public
/// `EventLoop.init` maps it at once (`NetworkingError+Loop.swift`).
struct LoopStartError: Error {
    /// "uv_loop_init", "uv_async_init".
    let call: String
    let status: Int32
}
