import Foundation
import HTTPTypes
import Testing
@testable import UVNetworking

/// `Request ==` answers at once for copies of one unchanged value (a session compares every
/// task's request with the last one it prepared); any change to a copy must still make it differ.
@Suite(.tags(.unit)) struct RequestEqualityTests {
    private let original: Request = {
        var request = Request(url: URL(string: "http://example.test/a")!, method: .post, body: Data("body".utf8))
        request.addValue("1", forHTTPHeaderField: "X-One")
        return request
    }()

    @Test func copiesAndEqualValuesBuiltApartAreEqual() {
        let copy = original
        #expect(copy == original)
        var twin = Request(url: URL(string: "http://example.test/a")!, method: .post, body: Data("body".utf8))
        twin.addValue("1", forHTTPHeaderField: "X-One")
        #expect(twin == original)
    }

    @Test func everyChangeToACopyMakesItDiffer() {
        let changes: [(String, (inout Request) -> Void)] = [
            ("url", { $0.url = URL(string: "http://example.test/b")! }),
            ("method", { $0.method = .put }),
            ("headerFields", { $0.headerFields = [("X-One", "2")] }),
            ("setValue", { $0.setValue("2", forHTTPHeaderField: "X-One") }),
            ("addValue", { $0.addValue("3", forHTTPHeaderField: "X-Three") }),
            ("body", { $0.body = Data("other".utf8) }),
            ("bodyStream", { $0.bodyStream = StreamedBody(length: 0, inputStream: { InputStream(data: Data()) }) }),
            ("timeoutInterval", { $0.timeoutInterval = 5 }),
            ("totalTimeoutInterval", { $0.totalTimeoutInterval = 5 }),
            ("httpShouldHandleCookies", { $0.httpShouldHandleCookies = false }),
        ]
        for (name, change) in changes {
            var copy = original
            change(&copy)
            #expect(copy != original, "a change of \(name) went unnoticed")
        }
    }

    @Test func aCopyChangedAndChangedBackIsEqualAgain() {
        var copy = original
        copy.timeoutInterval = 5
        copy.timeoutInterval = original.timeoutInterval
        #expect(copy == original)
    }
}
