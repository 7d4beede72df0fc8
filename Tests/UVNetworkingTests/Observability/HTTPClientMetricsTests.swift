import CoreMetrics
import Foundation
import MetricsTestKit
import Testing
@testable import UVNetworking

/// The metric handles' cache and the values of `error.type`, without a session; and what of a
/// URL may be logged.
@Suite(.tags(.unit)) struct HTTPClientMetricsTests {
    @Test func handlesAreMadeOncePerSetOfDimensions() {
        let factory = TestMetrics()
        let metrics = HTTPClientMetrics(factory: factory)
        let first = metrics.requestDuration(method: "GET", status: 200, host: "a", port: 80, errorType: nil)
        let other = metrics.requestDuration(method: "GET", status: 404, host: "a", port: 80, errorType: "404")
        #expect(metrics.requestDuration(method: "GET", status: 200, host: "a", port: 80, errorType: nil) === first)
        #expect(metrics.requestDuration(method: "GET", status: 404, host: "a", port: 80, errorType: "404") === other)
        #expect(first !== other)
        let active = metrics.activeRequests(method: "GET", host: "a", port: 80)
        #expect(metrics.activeRequests(method: "GET", host: "a", port: 80) === active)
        #expect(metrics.activeRequests(method: "PUT", host: "a", port: 80) !== active)
        #expect(factory.timers.count == 2)
    }

    @Test func theCachesStayBoundedOverManyOrigins() {
        let metrics = HTTPClientMetrics(factory: TestMetrics())
        for port in 0..<(HTTPClientMetrics.cacheLimit * 3) {
            _ = metrics.requestDuration(method: "GET", status: 200, host: "h", port: port, errorType: nil)
        }
        #expect(metrics.cachedHandleCount <= HTTPClientMetrics.cacheLimit)
    }

    @Test func errorTypeIsTheCodeOrAFailingStatus() {
        #expect(HTTPClientMetrics.errorType(NetworkingError(.connectTimeout, "x"), status: 0) == "connectTimeout")
        #expect(HTTPClientMetrics.errorType(nil, status: 503) == "503")
        #expect(HTTPClientMetrics.errorType(nil, status: 404) == "404")
        #expect(HTTPClientMetrics.errorType(nil, status: 399) == nil)
        #expect(HTTPClientMetrics.errorType(nil, status: 0) == nil)
    }

    @Test func urlsAreLoggedWithoutUserOrPassword() {
        let url = URL(string: "https://user:pa%40ss@example.com:8443/a/b?q=1#f")!
        #expect(LogRedaction.url(url) == "https://example.com:8443/a/b?q=1#f")
        #expect(LogRedaction.url(URL(string: "http://only-user@h/")!) == "http://h/")
        #expect(LogRedaction.url(URL(string: "http://h/p")!) == "http://h/p")
    }
}
