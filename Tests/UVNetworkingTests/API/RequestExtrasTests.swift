import Foundation
import Logging
import Testing
@testable import UVNetworking

/// `Request.logger` and `Request.wireCapture` share one box: each keeps its value when the
/// other changes, copies do not share a change, and neither plays a part in equality.
@Suite(.tags(.loopback)) struct RequestExtrasTests {
    @Test func loggerAndCaptureAreIndependentAndLeftOutOfEquality() {
        let plain = Request(url: URL(string: "http://127.0.0.1/")!)
        var request = plain
        let capture = WireCapture(limit: 10)
        request.wireCapture = capture
        request.logger = Logger(label: "test")
        #expect(request.wireCapture === capture)
        #expect(request.logger?.label == "test")
        var copy = request
        copy.logger = nil
        #expect(copy.wireCapture === capture)
        #expect(request.logger?.label == "test")
        copy.wireCapture = nil
        #expect(copy.wireCapture == nil && copy.logger == nil)
        #expect(request.wireCapture === capture)
        #expect(request == plain && copy == plain)
        #expect(capture.limit == 10)
        #expect(WireCapture(limit: -5).limit == 0)
        #expect(capture.exchanges.isEmpty)
    }
}
