import CUV
import Glibc

/// The loop side of one monitoring manager: performs what the sans-I/O `ReachabilityMonitor`
/// asks (dump requests to the kernel, the settle timer, sysfs classification on a worker, DNS
/// through the library's resolver, reports) and feeds it what happens (datagrams from the
/// netlink socket, overruns, the timer, answers).
///
/// Loop-confined: made anywhere (it holds no handle until `start`), then touched only on its
/// loop's thread. It never holds its manager: it reports through closures that hold the manager
/// weakly, so a manager dropped while monitoring goes away and its `deinit` closes this shell.
/// It closes itself (and says why through `failed`) when the socket fails or the loop shuts down.
final class ReachabilityShell {
    private let loop: EventLoop
    private let workers: WorkerPool
    private let classifier: InterfaceClassifier
    private var machine: ReachabilityMonitor
    private let report: (NetworkReachabilityStatus) -> Void
    private let failed: (NetworkReachabilityError) -> Void
    private var socket: RoutingSocket?
    private var poll: UnsafeMutablePointer<uv_poll_t>?
    /// Made at the first `armSettleTimer`.
    private var timer: LoopTimer?
    /// Made at the first `resolve`: one per monitor, on its loop.
    private var resolver: DNSResolver?
    /// Events that arrived while the machine's actions were being performed (a resolver that
    /// answers at once, from the hosts file): handled after them, in order, never re-entrantly.
    private var pending: [ReachabilityMonitor.Event] = []
    private var handling = false
    private(set) var isClosed = false

    /// The most datagrams read per readiness callback: a flood of changes must not hold the loop;
    /// the poll is level-triggered, so what is left is read at the next iteration.
    static let readsPerWakeup = 64
    /// A look-up that never ends would leave the status unknown: failing it lets the machine decide.
    static let resolutionTimeoutMilliseconds: UInt64 = 5_000

    init(target: ReachabilityMonitor.Target, loop: EventLoop, workers: WorkerPool, classifier: InterfaceClassifier,
         report: @escaping (NetworkReachabilityStatus) -> Void, failed: @escaping (NetworkReachabilityError) -> Void) {
        self.loop = loop
        self.workers = workers
        self.classifier = classifier
        self.machine = ReachabilityMonitor(target: target)
        self.report = report
        self.failed = failed
    }

    /// Opens the socket, polls it and asks the machine for its first dumps. On failure the shell
    /// is closed and `failed` says why.
    func start() {
        loop.assertInLoop()
        guard !isClosed, socket == nil else { return }
        let opened: RoutingSocket
        switch RoutingSocket.open() {
        case .success(let made): opened = made
        case .failure(let error):
            isClosed = true
            failed(error)
            return
        }
        let handle = UnsafeMutablePointer<uv_poll_t>.allocate(capacity: 1)
        let initialized = uv_poll_init_socket(loop.uv, handle, opened.descriptor)
        guard initialized == 0 else {
            handle.deallocate()
            opened.close()
            isClosed = true
            failed(.systemCall("uv_poll_init_socket", errno: -initialized))
            return
        }
        socket = opened
        poll = handle
        handle.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        let watching = watch(handle)
        guard watching == 0 else {
            fail(.systemCall("uv_poll_start", errno: -watching))
            return
        }
        loop.addShutdownObserver(self) { [self] in
            guard !isClosed else { return }
            close()
            failed(.loopShutDown)
        }
        feed(.started)
    }

    /// Closes the poll handle, the socket, the timer and the resolver. Idempotent; nothing of the
    /// shell is called back afterwards.
    func close() {
        loop.assertInLoop()
        guard !isClosed else { return }
        isClosed = true
        pending.removeAll()
        timer?.close()
        timer = nil
        if let poll {
            self.poll = nil
            uv_poll_stop(poll)
            poll.withMemoryRebound(to: uv_handle_t.self, capacity: 1) { handle in
                uv_close(handle) { handle in
                    handle!.withMemoryRebound(to: uv_poll_t.self, capacity: 1) { $0.deallocate() }
                }
            }
        }
        // After uv_close: libuv no longer watches the descriptor.
        socket?.close()
        socket = nil
        let resolver = self.resolver
        self.resolver = nil
        resolver?.close()  // its look-up's completion comes back here and is dropped (closed)
        loop.removeShutdownObserver(self)
    }

    // MARK: Events in

    /// Starts (or restarts) polling `handle` for readability.
    private func watch(_ handle: UnsafeMutablePointer<uv_poll_t>) -> Int32 {
        uv_poll_start(handle, Int32(UV_READABLE.rawValue)) { handle, status, _ in
            let shell = Unmanaged<ReachabilityShell>.fromOpaque(handle!.pointee.data).takeUnretainedValue()
            withExtendedLifetime(shell) { shell.readable(status: status) }
        }
    }

    private func readable(status: Int32) {
        guard !isClosed, let socket, let poll else { return }
        if status < 0 {
            // libuv reports a socket's pending error (POLLERR) as UV_EBADF and stops the handle.
            // A netlink socket raises one when the kernel dropped messages for it (ENOBUFS): the
            // next read returns that error and clears it, so watch again and read; a socket that
            // really failed fails that read.
            let watching = status == UV_EBADF.rawValue ? watch(poll) : status
            guard watching == 0 else {
                fail(.systemCall("uv_poll", errno: -watching))
                return
            }
        }
        let buffer = loop.readBuffer
        for _ in 0..<Self.readsPerWakeup {
            guard !isClosed else { return }
            switch socket.receive(into: buffer) {
            case .datagram(let count):
                feed(.received(Array(UnsafeRawBufferPointer(rebasing: buffer[..<count]))))
            case .drained:
                return
            case .overrun:
                ReachabilityTesting.overruns.add(1, ordering: .relaxed)
                feed(.receiveOverrun)
            case .foreign:
                continue
            case .failed(let error):
                fail(error)
                return
            }
        }
    }

    /// Hands `event` to the machine and performs its actions, in order. Events that arrive while
    /// it does wait their turn.
    private func feed(_ event: ReachabilityMonitor.Event) {
        guard !isClosed else { return }
        pending.append(event)
        guard !handling else { return }
        handling = true
        defer { handling = false }
        while !isClosed, !pending.isEmpty {
            let next = pending.removeFirst()
            for action in machine.handle(next) {
                guard !isClosed else { return }
                perform(action)
            }
        }
    }

    // MARK: Actions out

    private func perform(_ action: ReachabilityMonitor.Action) {
        switch action {
        case .send(let bytes):
            if let error = socket?.send(bytes) { fail(error) }
        case .armSettleTimer(let milliseconds):
            if timer == nil {
                timer = LoopTimer(loop: loop) { [unowned self] in feed(.settleTimerFired) }
            }
            timer!.arm(at: LoopDuration.deadline(LoopTimer.now(loop), plus: milliseconds))
        case .classify(let index, let name):
            classify(index: index, name: name)
        case .resolve(let host):
            resolve(host)
        case .report(let status):
            report(status)
        }
    }

    /// Reads sysfs on a worker (file I/O never runs on the loop) and answers on the loop.
    private func classify(index: Int32, name: String) {
        let classifier = self.classifier, loop = self.loop
        let shell = LoopBound(self, loop: loop)
        workers.run {
            let kind = classifier.kind(of: name)
            loop.execute { shell.value.feed(.interfaceClassified(index: index, name: name, kind: kind)) }
        }
    }

    private func resolve(_ host: String) {
        if resolver == nil {
            // No cache: after a network change the machine asks again and must hear the new answer.
            let settings = DNSResolver.Settings(cacheTTLMilliseconds: 0, timeoutMilliseconds: Self.resolutionTimeoutMilliseconds)
            resolver = DNSResolver(loop: loop, workers: workers, settings: settings)
        }
        resolver!.resolve(host: host, port: 0) { [self] result in
            switch result {
            case .success(let addresses): feed(.resolved(addresses))
            case .failure: feed(.resolutionFailed)
            }
        }
    }

    /// Closes the shell and tells the manager why: monitoring cannot go on.
    private func fail(_ error: NetworkReachabilityError) {
        guard !isClosed else { return }
        close()
        failed(error)
    }
}
