import Foundation

/// A multipart/form-data body being built: AFMultipartFormData's role.
///
/// Add parts with the `appendPart` methods, then hand the form to whoever sends it: it gives the
/// `contentType` and exact `contentLength` for the request head, and a `MultipartBodyReader`
/// (`makeBodyReader()`) that streams the body in bounded memory. `writeBody(to:)` and `data()`
/// produce the whole body locally.
///
/// A final class rather than a struct: the form is filled in by a builder closure and then
/// read, like AFNetworking's, and it holds InputStream parts, which are references that can be
/// read once; a struct copy would pretend to be an independent value while sharing them.
///
/// Concurrency: the form is `Sendable` so that it can travel with a request to the thread that
/// sends it. Its state is guarded by a lock. InputStream is not Sendable, so a stream is taken
/// with `sending`: the caller gives it up, and exactly one reader takes it later.
///
/// File parts are checked and measured when appended (as AFNetworking does) and read only when
/// the body is; a file whose size changed in between fails the read rather than sending a body
/// whose length differs from `contentLength`.
public final class MultipartFormData: @unchecked Sendable {
    // @unchecked: `parts` and `bandwidthThrottle` (and the stream boxes inside `parts`) are only
    // touched with `lock` held.

    /// The boundary between parts.
    public let boundary: String

    private let lock = NSLock()
    private var parts: [MultipartPart] = []
    private var bandwidthThrottle: BandwidthThrottle?

    /// A form with a random boundary in AFNetworking's format, "Boundary+" and 16 uppercase hex
    /// digits.
    public convenience init() {
        self.init(boundary: MultipartFormData.randomBoundary())
    }

    /// A form with the given boundary (fixed boundaries are for tests and reproducible bodies).
    /// It must be 1 to 70 RFC 2046 boundary characters not ending in a space; anything else is a
    /// programming error and traps.
    public init(boundary: String) {
        precondition(MultipartBoundary.isValid(boundary), "invalid multipart boundary \"\(boundary)\" (RFC 2046 §5.1.1)")
        self.boundary = boundary
    }

    /// A new random boundary: "Boundary+%08X%08X" of two random 32-bit values, as AFNetworking.
    public static func randomBoundary() -> String { MultipartBoundary.random() }

    /// The request's Content-Type: `multipart/form-data; boundary=...` (the boundary quoted when
    /// it is not a token).
    public var contentType: String {
        "multipart/form-data; boundary=\(MultipartBoundary.parameterValue(boundary))"
    }

    /// The exact length of the body in bytes, computed without reading it: file sizes as
    /// measured when appended, streams at their declared lengths. Zero for a form without parts
    /// (whose body is empty; the request serializer should then send no multipart body at all,
    /// as AFNetworking does).
    public var contentLength: Int64 {
        withLock { MultipartLayout.contentLength(of: $0.parts, boundary: boundary) }
    }

    /// Whether no part was appended.
    public var isEmpty: Bool { withLock { $0.parts.isEmpty } }

    /// Whether the body can be produced again: true unless a part is an InputStream, which can
    /// be read only once. A request whose form is not replayable must not be retried.
    public var isReplayable: Bool {
        withLock { form in
            !form.parts.contains { if case .stream = $0.body { return true } else { return false } }
        }
    }

    /// The bandwidth throttle set with `throttleBandwidth(withPacketSize:delay:)`, if any.
    public var throttle: BandwidthThrottle? { withLock { $0.bandwidthThrottle } }

    /// Limits the upload to `packetSize` bytes per packet with a pause of `delay` seconds after
    /// each one, for slow links (AFNetworking suggests `BandwidthThrottle.suggestedPacketSize`,
    /// 16 KiB, and `.suggestedDelay`, 0.2 s). The readers made afterwards carry it; the sender
    /// honours it (see `MultipartBodyReader`). `packetSize` must be positive and `delay` zero or
    /// more.
    public func throttleBandwidth(withPacketSize packetSize: Int, delay: TimeInterval) {
        let throttle = BandwidthThrottle(packetSize: packetSize, delay: delay)
        withLock { $0.bandwidthThrottle = throttle }
    }

    /// A reader that streams the body as it is now (parts appended later are not in it).
    ///
    /// Throws `.multipartFormDataFailed` when the form has an InputStream part that an earlier
    /// reader already took: a stream can be read once.
    public func makeBodyReader() throws -> MultipartBodyReader {
        let (segments, length, throttle) = try withLock { form throws(NetworkingError) in
            let segments = try MultipartLayout.segments(takingStreamsOf: form.parts, boundary: boundary)
            return (segments, MultipartLayout.contentLength(of: form.parts, boundary: boundary), form.bandwidthThrottle)
        }
        return MultipartBodyReader(segments: segments, contentLength: length, throttle: throttle)
    }

    /// Appends a part. Internal: the public `appendPart` methods build parts.
    func append(_ part: MultipartPart) {
        withLock { $0.parts.append(part) }
    }

    /// Runs `body` with the lock held and the form's mutable state in reach.
    private func withLock<Result, Failure: Error>(_ body: (MultipartFormData) throws(Failure) -> Result) throws(Failure) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(self)
    }
}
