import CBareLoop
import Foundation

/// What one run of the bare loop measured.
public struct BareLoopResult: Sendable {
    /// Responses that arrived whole.
    public var completed: Int
    /// Responses with a status other than 200 or a body of another length, plus failed
    /// connections and reads.
    public var errors: Int
    /// From the first connect to the last response, in seconds.
    public var elapsed: Double

    public var requestsPerSecond: Double { elapsed > 0 ? Double(completed) / elapsed : 0 }
    public var isValid: Bool { errors == 0 && completed > 0 }
}

/// The ceiling of UVNetworking's design, measured: a keep-alive GET client written straight on
/// libuv and llhttp — one loop on the calling thread, one request in flight per connection, the
/// next request written from llhttp's message-complete callback. No session, task, pool,
/// serializer or completion queue; the request's bytes are built once. Each response's status and
/// body length are checked, so it does the least a client must. What separates UVNetworking from
/// this figure is the cost of its abstractions, which `make bench` shows beside it.
public final class BareLoopClient {
    private let loop: UnsafeMutablePointer<uv_loop_t>
    private let request: UnsafeMutableRawBufferPointer
    private let readBuffer: UnsafeMutableRawBufferPointer
    private let expectedBodyLength: Int
    private var settings = llhttp_settings_t()
    private var connections: [Connection] = []

    private var remainingRequests: Int
    private var deadline: UInt64
    private var completed = 0
    private var errors = 0
    private var started: UInt64 = 0
    private var lastResponse: UInt64 = 0

    /// One connection: its libuv handles and its parser, which point back at it through `data`.
    private final class Connection {
        unowned let client: BareLoopClient
        let tcp = UnsafeMutablePointer<uv_tcp_t>.allocate(capacity: 1)
        let connect = UnsafeMutablePointer<uv_connect_t>.allocate(capacity: 1)
        let write = UnsafeMutablePointer<uv_write_t>.allocate(capacity: 1)
        let parser = UnsafeMutablePointer<llhttp_t>.allocate(capacity: 1)
        var bodyLength = 0
        var isOpen = true

        init(client: BareLoopClient) { self.client = client }
        deinit {
            tcp.deallocate()
            connect.deallocate()
            write.deallocate()
            parser.deallocate()
        }
        var context: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }
        static func from(_ pointer: UnsafeMutableRawPointer?) -> Connection {
            Unmanaged<Connection>.fromOpaque(pointer!).takeUnretainedValue()
        }
    }

    /// A client for `GET path` on `host:port` (an IPv4 address) that expects 200 and a body of
    /// `expectedBodyLength` bytes.
    public init(host: String, port: Int, path: String, expectedBodyLength: Int) {
        loop = UnsafeMutablePointer<uv_loop_t>.allocate(capacity: 1)
        uv_loop_init(loop)
        let text = "GET \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nAccept: */*\r\nUser-Agent: uvbench-bare-loop\r\n\r\n"
        request = UnsafeMutableRawBufferPointer.allocate(byteCount: text.utf8.count, alignment: 1)
        request.copyBytes(from: Array(text.utf8))
        readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
        self.expectedBodyLength = expectedBodyLength
        self.host = host
        self.port = port
        remainingRequests = 0
        deadline = 0
        llhttp_settings_init(&settings)
        settings.on_body = { parser, _, length in
            Connection.from(parser!.pointee.data).bodyLength += length
            return 0
        }
        settings.on_message_complete = { parser in
            let connection = Connection.from(parser!.pointee.data)
            connection.client.responseComplete(connection, status: Int(parser!.pointee.status_code))
            return 0
        }
    }
    private let host: String
    private let port: Int

    /// A client for `url` (http, an IPv4 address and a port).
    public convenience init(url: URL, expectedBodyLength: Int) throws {
        guard url.scheme == "http", let host = url.host, let port = url.port else {
            throw BareLoopError("bare loop: \(url.absoluteString) is not http://IPv4:port/...")
        }
        let query = url.query.map { "?" + $0 } ?? ""
        self.init(host: host, port: port, path: (url.path.isEmpty ? "/" : url.path) + query, expectedBodyLength: expectedBodyLength)
    }

    deinit {
        uv_loop_close(loop)
        loop.deallocate()
        request.deallocate()
        readBuffer.deallocate()
    }

    /// Keeps `connections` requests in flight until `requests` responses arrived, or, without
    /// `requests`, for `seconds`. Connections are opened afresh for each run and closed at its end.
    public func run(connections count: Int, seconds: Double, requests: Int? = nil) throws -> BareLoopResult {
        var address = sockaddr_in()
        guard uv_ip4_addr(host, Int32(port), &address) == 0 else {
            throw BareLoopError("bare loop: \(host) is not an IPv4 address")
        }
        completed = 0
        errors = 0
        remainingRequests = requests ?? Int.max
        started = uv_hrtime()
        lastResponse = started
        deadline = requests == nil ? started + UInt64(seconds * 1e9) : UInt64.max
        connections = (0..<count).map { _ in Connection(client: self) }
        for connection in connections {
            llhttp_init(connection.parser, HTTP_RESPONSE, &settings)
            connection.parser.pointee.data = connection.context
            uv_tcp_init(loop, connection.tcp)
            connection.tcp.pointee.data = connection.context
            uv_tcp_nodelay(connection.tcp, 1)
            let status = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sockaddr in
                    uv_tcp_connect(connection.connect, connection.tcp, sockaddr) { request, status in
                        let connection = Connection.from(request!.pointee.handle.pointee.data)
                        connection.client.connected(connection, status: status)
                    }
                }
            }
            if status != 0 { fail(connection) }
        }
        uv_run(loop, UV_RUN_DEFAULT)
        connections = []
        return BareLoopResult(completed: completed, errors: errors, elapsed: Double(lastResponse - started) / 1e9)
    }

    private func connected(_ connection: Connection, status: Int32) {
        guard status == 0 else { return fail(connection) }
        let reading = uv_read_start(connection.tcp.withMemoryRebound(to: uv_stream_t.self, capacity: 1) { $0 }, { handle, _, buffer in
            let client = Connection.from(handle!.pointee.data).client
            buffer!.pointee.base = client.readBuffer.baseAddress!.assumingMemoryBound(to: CChar.self)
            buffer!.pointee.len = client.readBuffer.count
        }, { stream, count, buffer in
            let connection = Connection.from(stream!.pointee.data)
            connection.client.read(connection, count: count, base: buffer!.pointee.base)
        })
        guard reading == 0 else { return fail(connection) }
        sendNext(connection)
    }

    /// Writes the request again, or closes the connection when the run is over.
    private func sendNext(_ connection: Connection) {
        guard remainingRequests > 0, uv_hrtime() < deadline else { return close(connection) }
        remainingRequests -= 1
        connection.bodyLength = 0
        // One write request per connection, reused: its callback runs in the pending phase of the
        // next loop iteration, before the poll phase that could read this request's response.
        var buffer = uv_buf_t(base: request.baseAddress!.assumingMemoryBound(to: CChar.self), len: request.count)
        let status = uv_write(connection.write, connection.tcp.withMemoryRebound(to: uv_stream_t.self, capacity: 1) { $0 }, &buffer, 1) { request, status in
            if status != 0 { Connection.from(request!.pointee.handle.pointee.data).client.fail(Connection.from(request!.pointee.handle.pointee.data)) }
        }
        if status != 0 { fail(connection) }
    }

    private func read(_ connection: Connection, count: Int, base: UnsafeMutablePointer<CChar>?) {
        guard connection.isOpen else { return }
        guard count >= 0 else { return fail(connection) }
        guard count > 0 else { return }
        if llhttp_execute(connection.parser, base, count) != HPE_OK { fail(connection) }
    }

    private func responseComplete(_ connection: Connection, status: Int) {
        lastResponse = uv_hrtime()
        if status == 200 && connection.bodyLength == expectedBodyLength { completed += 1 } else { errors += 1 }
        sendNext(connection)
    }

    private func fail(_ connection: Connection) {
        errors += 1
        close(connection)
    }

    private func close(_ connection: Connection) {
        guard connection.isOpen else { return }
        connection.isOpen = false
        connection.tcp.withMemoryRebound(to: uv_handle_t.self, capacity: 1) { uv_close($0, nil) }
    }
}

/// Why the bare loop could not run.
public struct BareLoopError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}
