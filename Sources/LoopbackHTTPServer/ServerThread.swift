import Glibc

/// A joinable POSIX thread running one closure.
///
/// The server needs `join` (so `stop()` returns only once the loop has freed everything), which
/// Foundation's `Thread` does not offer, and it keeps Foundation out of this target.
struct ServerThread: @unchecked Sendable {
    // @unchecked: a pthread_t is an opaque id; joining it from another thread is what it is for.
    private let id: pthread_t

    /// Starts a thread named `name` (at most 15 bytes, the kernel's limit) running `body`.
    /// Returns nil if the system refuses to create a thread.
    static func start(name: String, _ body: @escaping @Sendable () -> Void) -> ServerThread? {
        final class Box {
            let body: @Sendable () -> Void
            init(_ body: @escaping @Sendable () -> Void) { self.body = body }
        }
        let context = Unmanaged.passRetained(Box(body)).toOpaque()
        var id = pthread_t()
        let status = pthread_create(&id, nil, { context in
            Unmanaged<Box>.fromOpaque(context!).takeRetainedValue().body()
            return nil
        }, context)
        guard status == 0 else {
            Unmanaged<Box>.fromOpaque(context).release()
            return nil
        }
        setName(name, of: id)
        return ServerThread(id: id)
    }

    /// Names the thread, for top, perf and debuggers. pthread_setname_np is a GNU extension that
    /// Swift does not import (no _GNU_SOURCE), so it is looked up at run time; without it the
    /// thread just keeps its inherited name.
    private static func setName(_ name: String, of id: pthread_t) {
        typealias SetName = @convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "pthread_setname_np") else { return }
        _ = unsafeBitCast(symbol, to: SetName.self)(id, String(name.utf8.prefix(15))!)
    }

    /// Waits for the thread's closure to return.
    func join() {
        _ = pthread_join(id, nil)
    }
}
