import Foundation
import HTTPTypes
import Testing
@testable import UVNetworking

@Suite(.tags(.unit)) struct NetworkingErrorNSErrorTests {
    let url = URL(string: "http://example.com/users?id=1")!

    @Test func keyAndDomainConstants() {
        #expect(NetworkingError.responseSerializationErrorDomain == "com.alamofire.error.serialization.response")
        #expect(NetworkingError.requestSerializationErrorDomain == "com.alamofire.error.serialization.request")
        #expect(NetworkingError.responseUserInfoKey == "com.alamofire.serialization.response.error.response")
        #expect(NetworkingError.responseDataUserInfoKey == "com.alamofire.serialization.response.error.data")
    }

    @Test func timeoutBridgesToNSURLErrorTimedOut() {
        let error = NetworkingError(.requestTimeout, "the request took longer than 5 s", failingURL: url)
        let ns = error.nsError
        #expect(ns.domain == NSURLErrorDomain)
        #expect(ns.code == NSURLErrorTimedOut)
        #expect(ns.userInfo[NSURLErrorFailingURLErrorKey] as? URL == url)
        #expect(ns.userInfo["NSErrorFailingURLStringKey"] as? String == "http://example.com/users?id=1")
        #expect(ns.userInfo[NSLocalizedDescriptionKey] as? String == "the request took longer than 5 s")
        #expect(ns.userInfo[NetworkingError.responseUserInfoKey] == nil)
        #expect(ns.userInfo[NSUnderlyingErrorKey] == nil)
    }

    @Test func untrustedServerBridgesToAFNetworkings1202() {
        let error = NetworkingError(.serverCertificateUntrusted, "host name mismatch", failingURL: url)
        let ns = error.nsError
        #expect(ns.domain == NSURLErrorDomain)
        // A literal: swift-corelibs-foundation's NSURLErrorServerCertificateUntrusted is -1203.
        #expect(ns.code == -1202)
        #expect(ns.userInfo[NSURLErrorFailingURLErrorKey] as? URL == url)
        #expect(error.kind == .tls)
    }

    @Test func cancellationBridgesToNSURLErrorCancelled() {
        #expect(NetworkingError(.cancelled, "cancelled").nsError.code == NSURLErrorCancelled)
        #expect(NetworkingError(.cancelled, "cancelled").nsError.domain == NSURLErrorDomain)
    }

    @Test func statusErrorBridgesLikeAFNetworkings() throws {
        let response = makeResponse(500, reason: "Internal Server Error", contentType: "text/html")
        let body = Data(utf8: "<h1>oops</h1>")
        var serializer = HTTPResponseSerializer()
        serializer.acceptableContentTypes = ["application/json"]
        var error = try #require(serializer.validationError(for: response, data: body))
        error.failingURL = url
        let ns = error.nsError
        #expect(ns.domain == "com.alamofire.error.serialization.response")
        #expect(ns.code == NSURLErrorBadServerResponse)
        #expect(ns.localizedDescription == "Request failed: internal server error (500)")
        #expect(ns.userInfo[NetworkingError.responseUserInfoKey] as? HTTPResponse == response)
        #expect(ns.userInfo[NetworkingError.responseDataUserInfoKey] as? Data == body)
        let underlying = try #require(ns.userInfo[NSUnderlyingErrorKey] as? NSError)
        #expect(underlying.domain == "com.alamofire.error.serialization.response")
        #expect(underlying.code == NSURLErrorCannotDecodeContentData)
        #expect(underlying.userInfo[NSLocalizedDescriptionKey] as? String == "Request failed: unacceptable content-type: text/html")
    }

    @Test func bridgingWithAsKeepsCodeAndUserInfo() {
        let error: any Error = NetworkingError(.dnsFailure, "no such host", failingURL: url)
        let ns = error as NSError
        #expect(ns.code == NSURLErrorCannotFindHost)
        #expect(ns.userInfo[NSURLErrorFailingURLErrorKey] as? URL == url)
        #expect(error.localizedDescription == "no such host")
    }

    @Test func foreignUnderlyingErrorIsBridged() throws {
        let cause = CocoaError(.fileReadCorruptFile)
        let ns = NetworkingError(.serializationFailed, "bad", underlyingError: cause).nsError
        let underlying = try #require(ns.userInfo[NSUnderlyingErrorKey] as? NSError)
        #expect(underlying.code == CocoaError.fileReadCorruptFile.rawValue)
    }

    @Test func responseObjectIsCarriedAndCleared() {
        var error = NetworkingError(.unacceptableStatusCode, "x")
        #expect(error.responseObject == nil)
        error.responseObject = ["a": 1]
        #expect((error.responseObject as? [String: Int])?["a"] == 1)
        error.responseObject = nil
        #expect(error.responseObject == nil)
    }
}
