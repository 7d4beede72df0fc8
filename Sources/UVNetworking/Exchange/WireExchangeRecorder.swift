/// Where a connection copies the bytes of the exchange in flight, when its request has a
/// `WireCapture`: the capture and the exchange's place in it. Made per exchange, only for
/// captured requests; loop thread only.
final class WireExchangeRecorder {
    private let capture: WireCapture
    private let index: Int

    init(capture: WireCapture, index: Int) {
        self.capture = capture
        self.index = index
    }

    /// Bytes of the request, as handed to the transport.
    func wrote(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { capture.appendRequest($0, at: index) }
    }

    /// Bytes of the response, as the decoder consumed them.
    func read(_ bytes: UnsafeRawBufferPointer) {
        capture.appendResponse(bytes, at: index)
    }

    /// Bytes of the response, from an array.
    func read(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { capture.appendResponse($0, at: index) }
    }

    /// The response ended as framed.
    func completed() {
        capture.markComplete(at: index)
    }
}
