import Glibc

/// The kernel's links, addresses and routes, read once: the three dumps a reachability monitor
/// runs, on a socket of their own that subscribes to nothing, each awaited with poll. Blocks
/// (at most `timeoutMilliseconds` per wait): on a worker thread only, never the loop.
enum NetworkTableSnapshot {
    /// The longest wait for the kernel's next datagram; it answers a dump at once.
    static let timeoutMilliseconds: Int32 = 2000

    /// The table, or why it could not be read. A dump the kernel marks interrupted (the tables
    /// changed meanwhile) is used as it is: the decision it feeds is made once per connection.
    static func read() -> Result<NetworkTable, NetworkReachabilityError> {
        let socket: RoutingSocket
        switch RoutingSocket.open(groups: 0) {
        case .success(let opened): socket = opened
        case .failure(let error): return .failure(error)
        }
        defer { socket.close() }
        var table = NetworkTable()
        // Large enough for any dump datagram (the kernel fills at most 32 KiB, or a page).
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 8)
        defer { buffer.deallocate() }
        for (number, kind) in NetlinkDumpKind.allCases.enumerated() {
            let sequence = UInt32(number + 1)
            if let error = socket.send(NetlinkDumpRequest.encode(kind, sequence: sequence)) { return .failure(error) }
            if let error = receiveDump(sequence, on: socket, into: &table, buffer: buffer) { return .failure(error) }
        }
        return .success(table)
    }

    /// Reads the answer numbered `sequence` into `table` up to its NLMSG_DONE.
    private static func receiveDump(_ sequence: UInt32, on socket: RoutingSocket, into table: inout NetworkTable,
                                    buffer: UnsafeMutableRawBufferPointer) -> NetworkReachabilityError? {
        while true {
            var waiting = pollfd(fd: socket.descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&waiting, 1, timeoutMilliseconds)
            if ready < 0 {
                if errno == EINTR { continue }
                return .systemCall("poll", errno: errno)
            }
            if ready == 0 { return .systemCall("poll", errno: ETIMEDOUT) }
            switch socket.receive(into: buffer) {
            case .drained, .foreign:
                continue
            case .overrun:
                return .systemCall("recvfrom", errno: ENOBUFS)
            case .failed(let error):
                return error
            case .datagram(let count):
                let datagram = NetlinkDecoder.decode(Array(UnsafeRawBufferPointer(rebasing: buffer[..<count])))
                for message in datagram.messages where message.sequence == sequence {
                    switch message.body {
                    case .newLink(let link): table.insert(link)
                    case .newAddress(let address): table.insert(address)
                    case .newRoute(let route): table.insert(route)
                    case .done: return nil
                    case .error(let code): return .systemCall("dump", errno: -code)
                    default: continue
                    }
                }
                if datagram.framingError != nil { return .systemCall("recvfrom", errno: EBADMSG) }
            }
        }
    }
}
