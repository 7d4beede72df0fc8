import CNGHTTP2
import UVHTTP1

/// What an HTTP/2 session reports while it takes in the server's bytes. Called synchronously
/// from inside `HTTP2Session.receive` (and `submit`), on the loop thread.
protocol HTTP2SessionDelegate: AnyObject {
    /// The server's SETTINGS_MAX_CONCURRENT_STREAMS (at the first SETTINGS, and whenever it
    /// changes): how many streams the client may have open at once.
    func sessionChangedStreamLimit(_ limit: Int)
    /// A response head on `stream`: an interim one (1xx) or the final one. `block` has the
    /// regular fields, names lowercase, in order (pseudo-fields are gone), and notes where
    /// content-length and date are; it is the session's, valid only during the call.
    func session(stream: Int32, receivedHead status: Int, block: HTTP2HeaderBlock, isFinal: Bool)
    /// Body bytes of `stream`, valid only during the call.
    func session(stream: Int32, receivedData bytes: UnsafeRawBufferPointer)
    /// The server ended `stream` (END_STREAM): the response is complete.
    func session(streamEnded stream: Int32)
    /// `stream` closed: after its end, or reset (`errorCode` is RFC 9113's code, 0 for a clean
    /// close). `byClient`: the client reset it (a malformed response, or the task gave up).
    func session(stream: Int32, closedWith errorCode: UInt32, byClient: Bool)
    /// The server said GOAWAY: streams above `lastStreamID` were never processed.
    func sessionReceivedGoAway(lastStreamID: Int32, errorCode: UInt32)
}

/// One client HTTP/2 session on nghttp2, without I/O: the server's bytes go in with `receive`,
/// the bytes to send come out of `takeOutput`. What the frames mean is reported to the
/// delegate. Loop-confined; a class because nghttp2 calls back into it.
///
/// Our limits, not nghttp2's defaults: no server push (ENABLE_PUSH=0; a PUSH_PROMISE is a
/// connection error), a bounded header list (`maximumHeaderListBytes`, decoded size), a bounded
/// number of CONTINUATION frames and of SETTINGS entries, and flow control in our hands: the
/// connection's window reopens as bytes arrive, a stream's only as its consumer takes them
/// (`consume`), so a consumer that stops stops only its stream.
///
/// Its state is `@exclusivity(unchecked)`, as the connection's is: only the loop thread touches
/// it, and nghttp2 calls back only from inside `receive`, `takeOutput` and `submit`, never in
/// the middle of another access to the same property. A checked access costs a thread-local
/// lookup each, several per frame.
final class HTTP2Session {
    /// What the client announces in its SETTINGS.
    struct Settings {
        /// Each stream's receive window at first: what the server may send on it before the
        /// consumer takes any. Streams grow theirs as their consumer keeps up (`HTTP2StreamWindow`).
        var initialStreamWindow: Int32 = HTTP2StreamWindow.initial
        /// The connection's receive window.
        var connectionWindow: Int32 = 64 << 20
        /// Decoded size of a response's header list, RFC 9113 §6.5.2's SETTINGS_MAX_HEADER_LIST_SIZE.
        var maximumHeaderListBytes: Int = 64 << 10
    }

    private let session: OpaquePointer
    /// nghttp2's memory for this session; outlives it (`deinit` deletes the session first).
    let memory = HTTP2SessionMemory()
    /// Who hears of frames. Unowned: the connection that owns the session is the delegate.
    unowned(unsafe) let delegate: HTTP2SessionDelegate
    let settings: Settings
    /// Request bodies held in memory until sent, per stream.
    @exclusivity(unchecked) private var bodies: [Int32: BodySource] = [:]
    /// The stream whose header block is being decoded (0: none). One at a time: nothing may
    /// come between a block's frames (RFC 9113 §6.10).
    @exclusivity(unchecked) private var blockStream: Int32 = 0
    /// Its :status (0: none yet, as in a trailer section), its decoded size as RFC 9113 §6.5.2
    /// counts it, and its regular fields.
    @exclusivity(unchecked) private var blockStatus = 0
    @exclusivity(unchecked) private var blockSize = 0
    private let block = HTTP2HeaderBlock()
    /// A request's header block, reused from request to request.
    private let requestBlock = HTTP2HeaderBlock()
    /// The request `requestBlock` was translated from, and where its body starts. A batch sends
    /// the same request over and over, and the session's prepared-request cache hands out one
    /// array for equal requests: the same storage again is the same bytes (it is kept here, so
    /// it cannot be freed and reused for others, and a writer would copy it first), and skips
    /// the translation. Only small requests are kept, so no large body stays alive for it.
    @exclusivity(unchecked) private var requestBlockSource: [UInt8] = []
    @exclusivity(unchecked) private var requestBlockBodyStart = 0
    @exclusivity(unchecked) private var requestBlockScheme = ""
    static let translationCacheLimit = 4096
    /// The last SETTINGS_MAX_CONCURRENT_STREAMS reported.
    @exclusivity(unchecked) private var reportedStreamLimit = -1
    /// Set when a callback decided the connection must end (our limits); `receive` then fails.
    @exclusivity(unchecked) private(set) var fatal: HTTP2Error?
    /// What nghttp2 last found wrong in a frame (it ends the connection for the serious ones).
    @exclusivity(unchecked) private var lastInvalidFrame: String?
    /// Streams the client reset (RST_STREAM sent), until they close.
    @exclusivity(unchecked) private var resetByClient: Set<Int32> = []
    /// Streams whose response our glue found malformed, reset with PROTOCOL_ERROR. Nothing more is
    /// reported for them, and their close carries that code whatever closed them first.
    @exclusivity(unchecked) private var rejected: Set<Int32> = []
    /// Marks a stream that had a head (interim or final): the server processed it. Kept as the
    /// stream's user data inside nghttp2, which drops it with the stream; no table of ours.
    private static var answeredMark: UnsafeMutableRawPointer { UnsafeMutableRawPointer(bitPattern: 1)! }

    /// A request body the session sends from: bytes in memory, or chunks that come later.
    final class BodySource {
        var bytes: [UInt8]
        var offset = 0
        /// More chunks may come (`appendBody`); false once the last was given.
        var isOpen: Bool
        init(bytes: [UInt8], isOpen: Bool) {
            self.bytes = bytes
            self.isOpen = isOpen
        }
        var remaining: Int { bytes.count - offset }
        /// Sent bytes kept at the front before they are dropped (a copy of what is left, at
        /// most as much as was dropped).
        static let compactionThreshold = 64 << 10
    }

    init(delegate: HTTP2SessionDelegate, settings: Settings = Settings()) throws(HTTP2Error) {
        self.delegate = delegate
        self.settings = settings
        var callbacks: OpaquePointer?
        nghttp2_session_callbacks_new(&callbacks)
        defer { nghttp2_session_callbacks_del(callbacks) }
        nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks, Self.onBeginHeaders)
        nghttp2_session_callbacks_set_on_header_callback(callbacks, Self.onHeader)
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, Self.onFrameReceived)
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, Self.onDataChunk)
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, Self.onStreamClose)
        nghttp2_session_callbacks_set_on_invalid_frame_recv_callback(callbacks, Self.onInvalidFrame)
        nghttp2_session_callbacks_set_on_frame_send_callback(callbacks, Self.onFrameSent)
        nghttp2_session_callbacks_set_on_frame_not_send_callback(callbacks, Self.onFrameNotSent)
        var options: OpaquePointer?
        nghttp2_option_new(&options)
        defer { nghttp2_option_del(options) }
        // Windows reopen when we say (`consume`), not when nghttp2 has the bytes.
        nghttp2_option_set_no_auto_window_update(options, 1)
        nghttp2_option_set_max_settings(options, 32)
        nghttp2_option_set_max_continuations(options, 16)
        var made: OpaquePointer?
        var allocator = memory.nghttp2Allocator
        let status = nghttp2_session_client_new3(&made, callbacks, nil, options, &allocator)
        guard status == 0, let made else { throw .engine("nghttp2_session_client_new3: \(String(cString: nghttp2_strerror(status)))") }
        session = made
        nghttp2_session_set_user_data(session, Unmanaged.passUnretained(self).toOpaque())
        var entries = [
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_ENABLE_PUSH.rawValue), value: 0),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE.rawValue), value: UInt32(settings.initialStreamWindow)),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE.rawValue), value: UInt32(settings.maximumHeaderListBytes)),
        ]
        nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), &entries, entries.count)
        nghttp2_session_set_local_window_size(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), 0, settings.connectionWindow)
    }

    deinit {
        nghttp2_session_del(session)
    }

    // MARK: Requests

    /// Opens a stream for `request`, a head in HTTP/1.1 form (see `HTTP2RequestHead`) to `scheme`.
    /// Returns the stream's id and what it sends as DATA: the bytes after the head, or, when
    /// `streamed`, an open source the caller appends the body's chunks to (nil: no body).
    func submit(request: [UInt8], scheme: String, streamed: Bool) throws(HTTP2Error) -> (stream: Int32, body: BodySource?) {
        if !Self.sameStorage(request, requestBlockSource) || scheme != requestBlockScheme {
            // Forgotten first: a translation that fails leaves the block half made.
            requestBlockSource = []
            requestBlockBodyStart = try HTTP2RequestHead.translate(request, scheme: scheme, into: requestBlock)
            if request.count <= Self.translationCacheLimit {
                requestBlockSource = request
                requestBlockScheme = scheme
            }
        }
        let body: BodySource?
        if streamed {
            body = BodySource(bytes: [], isOpen: true)
        } else if requestBlockBodyStart < request.count {
            body = BodySource(bytes: Array(request[requestBlockBodyStart...]), isOpen: false)
        } else {
            body = nil
        }
        return (try submit(requestBlock, body: body), body)
    }

    /// Whether two arrays share their storage (and so their bytes); never for empty ones.
    private static func sameStorage(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard !a.isEmpty, a.count == b.count else { return false }
        return a.withUnsafeBufferPointer { a in b.withUnsafeBufferPointer { b in a.baseAddress == b.baseAddress } }
    }

    /// Opens a stream whose header block has these fields (pseudo-fields first, names lowercase).
    func submit(fields: [(name: String, value: String)], body: BodySource?) throws(HTTP2Error) -> Int32 {
        try submit(HTTP2HeaderBlock(fields), body: body)
    }

    private func submit(_ block: HTTP2HeaderBlock, body: BodySource?) throws(HTTP2Error) -> Int32 {
        // nghttp2 copies the block: pointers into ours, valid for the call, are enough.
        let bytes = block.bytes
        let stream = withUnsafeTemporaryAllocation(of: nghttp2_nv.self, capacity: block.count) { nva -> Int32 in
            let base = UnsafeMutablePointer(mutating: bytes.baseAddress!)
            for (index, bound) in block.bounds.enumerated() {
                nva.initializeElement(at: index, to: nghttp2_nv(
                    name: base + Int(bound.nameStart), value: base + Int(bound.valueStart),
                    namelen: Int(bound.nameEnd - bound.nameStart), valuelen: Int(bound.valueEnd - bound.valueStart),
                    flags: UInt8(NGHTTP2_NV_FLAG_NONE.rawValue)))
            }
            defer { nva.deinitialize() }
            if body != nil {
                var provider = nghttp2_data_provider(source: nghttp2_data_source(ptr: nil), read_callback: Self.readBody)
                return nghttp2_submit_request(session, nil, nva.baseAddress, block.count, &provider, nil)
            }
            return nghttp2_submit_request(session, nil, nva.baseAddress, block.count, nil, nil)
        }
        guard stream > 0 else { throw .engine("nghttp2_submit_request: \(String(cString: nghttp2_strerror(stream)))") }
        if let body { bodies[stream] = body }
        return stream
    }

    /// More of `stream`'s body is in its source (or it ended): send it.
    func bodyAppended(_ stream: Int32) {
        nghttp2_session_resume_data(session, stream)
    }

    /// Resets `stream` (the task gave up): RST_STREAM with `errorCode` (CANCEL by default).
    func reset(_ stream: Int32, errorCode: UInt32 = NGHTTP2_CANCEL.rawValue) {
        bodies[stream] = nil
        nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), stream, errorCode)
    }

    /// `stream`'s receive window becomes `size`; a larger one is announced with WINDOW_UPDATE.
    func setWindow(of stream: Int32, to size: Int32) {
        nghttp2_session_set_local_window_size(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), stream, size)
    }

    /// The consumer took `count` bytes of `stream`'s body: its window opens by as much.
    func consume(_ stream: Int32, _ count: Int) {
        guard count > 0 else { return }
        nghttp2_session_consume_stream(session, stream, count)
    }

    /// Frees the memory nghttp2 gave back and this session kept for its next streams: the
    /// connection went idle.
    func trimMemory() {
        memory.trim()
    }

    /// Says GOAWAY (NO_ERROR) with the last stream the server started (none: we take no push).
    func goAway() {
        nghttp2_submit_goaway(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), nghttp2_session_get_last_proc_stream_id(session),
                              NGHTTP2_NO_ERROR.rawValue, nil, 0)
    }

    /// The server's current limit on concurrent streams.
    var streamLimit: Int {
        Int(nghttp2_session_get_remote_settings(session, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS))
    }

    /// Whether the session may still open streams (no GOAWAY either way, no fatal error).
    var acceptsStreams: Bool { nghttp2_session_check_request_allowed(session) != 0 && fatal == nil }

    /// Whether anything remains to be read or written (false once both sides are done).
    var isAlive: Bool { nghttp2_session_want_read(session) != 0 || nghttp2_session_want_write(session) != 0 }

    // MARK: Bytes

    /// Takes in the server's bytes; the delegate hears what they mean before this returns.
    func receive(_ bytes: UnsafeRawBufferPointer) throws(HTTP2Error) {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        let consumed = nghttp2_session_mem_recv(session, base, bytes.count)
        if let fatal { throw fatal }
        if consumed < 0 { throw .protocolViolation(String(cString: nghttp2_strerror(Int32(consumed)))) }

        // The connection's window reopens at once: only streams wait for their consumers.
        let connectionConsumed = nghttp2_session_get_effective_recv_data_length(session)
        if connectionConsumed > settings.connectionWindow / 2 {
            nghttp2_session_consume_connection(session, Int(connectionConsumed))
        }
    }

    /// Appends what is due to the server to `output` (SETTINGS, headers, data, acks). When
    /// nghttp2 found a connection error in the server's frames, the output ends with its GOAWAY
    /// and `fatal` says why: the caller sends it, then closes.
    func takeOutput(into output: inout [UInt8]) throws(HTTP2Error) {
        while true {
            var data: UnsafePointer<UInt8>?
            let count = nghttp2_session_mem_send(session, &data)
            if count < 0 { throw .engine(String(cString: nghttp2_strerror(Int32(count)))) }
            guard count > 0, let data else { return }
            output.append(contentsOf: UnsafeBufferPointer(start: data, count: count))
        }
    }

    /// Whether `takeOutput` would give something.
    var hasOutput: Bool { nghttp2_session_want_write(session) != 0 }

    // MARK: Callbacks (from inside nghttp2, on the loop thread)

    private static func this(_ userData: UnsafeMutableRawPointer?) -> HTTP2Session {
        Unmanaged<HTTP2Session>.fromOpaque(userData!).takeUnretainedValue()
    }

    /// Runs `body` with the session, neither retained nor released: nghttp2 calls back only
    /// from inside the session's own calls, so it is alive throughout. The callbacks that run
    /// for every frame and header use this; each retain and release is an atomic operation.
    @inline(__always)
    private static func withSession(_ userData: UnsafeMutableRawPointer?, _ body: (HTTP2Session) -> Int32) -> Int32 {
        Unmanaged<HTTP2Session>.fromOpaque(userData!)._withUnsafeGuaranteedRef(body)
    }

    private static let onBeginHeaders: nghttp2_on_begin_headers_callback = { _, frame, userData in
        guard let frame else { return 0 }
        return withSession(userData) { session -> Int32 in
            let stream = frame.pointee.hd.stream_id
            if frame.pointee.hd.type == UInt8(NGHTTP2_PUSH_PROMISE.rawValue) {
                session.fatal = .protocolViolation("the server sent PUSH_PROMISE, which the client's SETTINGS_ENABLE_PUSH=0 forbids (RFC 9113 §6.6)")
                return NGHTTP2_ERR_CALLBACK_FAILURE.rawValue
            }
            session.blockStream = stream
            session.blockStatus = 0
            session.blockSize = 0
            session.block.removeAll()
            return 0
        }
    }

    private static let onHeader: nghttp2_on_header_callback = { _, frame, name, nameLength, value, valueLength, _, userData in
        guard let frame, let name, let value else { return 0 }
        return withSession(userData) { session -> Int32 in
            // Not the block begun (a rejected stream's rest, or a PUSH_PROMISE's): nothing to keep.
            guard frame.pointee.hd.stream_id == session.blockStream else { return 0 }
            // RFC 9113 §6.5.2 counts each field as name + value + 32.
            session.blockSize += nameLength + valueLength + 32
            if session.blockSize > session.settings.maximumHeaderListBytes {
                session.fatal = .headerListTooLarge(limit: session.settings.maximumHeaderListBytes)
                return NGHTTP2_ERR_CALLBACK_FAILURE.rawValue
            }
            guard nameLength > 0, name[0] == 0x3A else {
                session.block.append(name: UnsafeBufferPointer(start: name, count: nameLength),
                                     value: UnsafeBufferPointer(start: value, count: valueLength))
                return 0
            }
            // nghttp2 lets through only the pseudo-fields of a response, :status with three digits
            // but not 101. Below 100 is ours to refuse, as the HTTP/1.1 parser does (RFC 9110 §15:
            // the first digit is the class, 1 to 5).
            guard nameLength == 7, name[1] == 0x73 /* s */, name[6] == 0x73 /* s */ else { return 0 }
            var status = 0
            for offset in 0..<valueLength { status = status &* 10 &+ Int(value[offset] &- 0x30) }
            guard valueLength == 3, status >= 100 else {
                session.reject(frame.pointee.hd.stream_id)
                return 0
            }
            session.blockStatus = status
            return 0
        }
    }

    private static let onFrameReceived: nghttp2_on_frame_recv_callback = { _, frame, userData in
        guard let frame else { return 0 }
        return withSession(userData) { session -> Int32 in
            let stream = frame.pointee.hd.stream_id
            let endsStream = frame.pointee.hd.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0
            switch UInt32(frame.pointee.hd.type) {
            case NGHTTP2_HEADERS.rawValue:
                if session.isRejected(stream) { return 0 }
                if session.blockStream == stream {
                    session.blockStream = 0
                    // A trailer section has no :status: its fields are not a head.
                    let status = session.blockStatus
                    if status != 0 {
                        nghttp2_session_set_stream_user_data(session.session, stream, HTTP2Session.answeredMark)
                        session.delegate.session(stream: stream, receivedHead: status, block: session.block, isFinal: status >= 200)
                    }
                }
                if endsStream { session.delegate.session(streamEnded: stream) }
            case NGHTTP2_DATA.rawValue:
                if endsStream && !session.isRejected(stream) { session.delegate.session(streamEnded: stream) }
            case NGHTTP2_SETTINGS.rawValue:
                let limit = session.streamLimit
                if limit != session.reportedStreamLimit {
                    session.reportedStreamLimit = limit
                    session.delegate.sessionChangedStreamLimit(limit)
                }
            case NGHTTP2_GOAWAY.rawValue:
                session.delegate.sessionReceivedGoAway(lastStreamID: frame.pointee.goaway.last_stream_id, errorCode: frame.pointee.goaway.error_code)
            default:
                break
            }
            return 0
        }
    }

    private static let onInvalidFrame: nghttp2_on_invalid_frame_recv_callback = { _, frame, errorCode, userData in
        let session = this(userData)
        let type = frame.map { Int($0.pointee.hd.type) } ?? -1
        let names = ["DATA", "HEADERS", "PRIORITY", "RST_STREAM", "SETTINGS", "PUSH_PROMISE", "PING", "GOAWAY", "WINDOW_UPDATE", "CONTINUATION"]
        let name = type >= 0 && type < names.count ? names[type] : "frame type \(type)"
        session.lastInvalidFrame = "invalid \(name) frame: \(String(cString: nghttp2_strerror(errorCode)))"
        return 0
    }

    private static let onFrameSent: nghttp2_on_frame_send_callback = { _, frame, userData in
        guard let frame else { return 0 }
        return withSession(userData) { session -> Int32 in
            if UInt32(frame.pointee.hd.type) == NGHTTP2_RST_STREAM.rawValue {
                session.resetByClient.insert(frame.pointee.hd.stream_id)
                return 0
            }
            guard UInt32(frame.pointee.hd.type) == NGHTTP2_GOAWAY.rawValue else { return 0 }
            let code = frame.pointee.goaway.error_code
            // A GOAWAY with an error is nghttp2 ending the connection over the server's frames.
            if code != NGHTTP2_NO_ERROR.rawValue && session.fatal == nil {
                session.fatal = .protocolViolation(session.lastInvalidFrame ?? "the connection ended with \(HTTP2Error.name(of: code))")
            }
            return 0
        }
    }

    /// A request's HEADERS that could not go out (the server said GOAWAY before they were sent):
    /// nghttp2 never opened the stream, so no close comes for it. It was never processed.
    private static let onFrameNotSent: nghttp2_on_frame_not_send_callback = { _, frame, _, userData in
        guard let frame, UInt32(frame.pointee.hd.type) == NGHTTP2_HEADERS.rawValue else { return 0 }
        let session = this(userData)
        let stream = frame.pointee.hd.stream_id
        session.bodies[stream] = nil
        session.delegate.session(stream: stream, closedWith: NGHTTP2_REFUSED_STREAM.rawValue, byClient: false)
        return 0
    }

    private static let onDataChunk: nghttp2_on_data_chunk_recv_callback = { _, _, stream, data, length, userData in
        guard let data, length > 0 else { return 0 }
        return withSession(userData) { session -> Int32 in
            if session.isRejected(stream) { return 0 }
            session.delegate.session(stream: stream, receivedData: UnsafeRawBufferPointer(start: data, count: length))
            return 0
        }
    }

    private static let onStreamClose: nghttp2_on_stream_close_callback = { _, stream, errorCode, userData in
        return withSession(userData) { session -> Int32 in
            if !session.bodies.isEmpty { session.bodies[stream] = nil }
            if session.blockStream == stream { session.blockStream = 0 }
            let byClient = !session.resetByClient.isEmpty && session.resetByClient.remove(stream) != nil
            let wasAnswered = nghttp2_session_get_stream_user_data(session.session, stream) == HTTP2Session.answeredMark
            // A rejected stream may close before our RST_STREAM goes out (the server ended it):
            // the task still hears that its response was malformed.
            if !session.rejected.isEmpty, session.rejected.remove(stream) != nil {
                session.delegate.session(stream: stream, closedWith: NGHTTP2_PROTOCOL_ERROR.rawValue, byClient: true)
                return 0
            }
            // REFUSED_STREAM, or nghttp2 closing a stream above a GOAWAY's last stream id, says the
            // request was never processed (RFC 9113 §8.7, §6.8). After a head that is a lie that
            // would have the request sent twice: it is the server's protocol error.
            if errorCode == NGHTTP2_REFUSED_STREAM.rawValue && !byClient && wasAnswered {
                session.delegate.session(stream: stream, closedWith: NGHTTP2_PROTOCOL_ERROR.rawValue, byClient: false)
                return 0
            }
            session.delegate.session(stream: stream, closedWith: errorCode, byClient: byClient)
            return 0
        }
    }

    /// Resets `stream` with PROTOCOL_ERROR over a response RFC 9113 §8.1.1 calls malformed that
    /// nghttp2 let through, and stops reporting its frames.
    private func reject(_ stream: Int32) {
        rejected.insert(stream)
        if blockStream == stream { blockStream = 0 }
        // Fails only for a stream already closed or out of memory; the close is reported either way.
        _ = nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), stream, NGHTTP2_PROTOCOL_ERROR.rawValue)
    }

    /// Whether our glue reset `stream` over a malformed response (almost never: no lookup then).
    private func isRejected(_ stream: Int32) -> Bool { !rejected.isEmpty && rejected.contains(stream) }

    private static let readBody: nghttp2_data_source_read_callback = { _, stream, buffer, length, flags, _, userData in
        let session = this(userData)
        guard let body = session.bodies[stream], let buffer else {
            flags?.pointee |= UInt32(NGHTTP2_DATA_FLAG_EOF.rawValue)
            return 0
        }
        let count = min(length, body.remaining)
        if count > 0 {
            body.bytes.withUnsafeBufferPointer { bytes in
                buffer.update(from: bytes.baseAddress! + body.offset, count: count)
            }
            body.offset += count
            if body.offset == body.bytes.count {
                body.bytes.removeAll(keepingCapacity: false)
                body.offset = 0
            } else if body.offset >= BodySource.compactionThreshold && body.offset >= body.bytes.count / 2 {
                // Chunks keep arriving behind what is sent, so the buffer may never empty: drop
                // the sent part, or a streamed upload would stay in memory whole.
                body.bytes.removeFirst(body.offset)
                body.offset = 0
            }
        }
        if body.remaining == 0 {
            if body.isOpen {
                if count == 0 { return ssize_t(NGHTTP2_ERR_DEFERRED.rawValue) }
            } else {
                flags?.pointee |= UInt32(NGHTTP2_DATA_FLAG_EOF.rawValue)
                session.bodies[stream] = nil
            }
        }
        return count
    }
}
