import CUV
import Testing
@testable import UVNetworking
import UVHTTP1

/// Each `ExchangeError` (with the request body's and the decoder's errors) becomes the
/// `NetworkingError` the public API has always reported.
@Suite(.tags(.unit)) struct ExchangeErrorMappingTests {
    private struct StreamFailure: Error, CustomStringConvertible {
        var description: String { "disk gone" }
    }

    @Test(arguments: [
        (ExchangeError.connectTimeout(host: "o.test", port: 80, milliseconds: 500, tls: false), NetworkingError.Code.connectTimeout,
         "connecting to o.test:80 took longer than 500 ms"),
        (.connectTimeout(host: "o.test", port: 443, milliseconds: 500, tls: true), .connectTimeout,
         "connecting to and the TLS handshake with o.test:443 took longer than 500 ms"),
        (.connectFailed(host: "o.test", port: 80, status: UV_ECONNREFUSED.rawValue), .connectionRefused,
         "connecting to o.test:80 failed: ECONNREFUSED (connection refused)"),
        (.connectFailed(host: "o.test", port: 80, status: UV_ENETUNREACH.rawValue), .connectFailed,
         "connecting to o.test:80 failed: ENETUNREACH (network is unreachable)"),
        (.transport(.noAddresses(host: "o.test")), .dnsFailure, "o.test has no IPv4 or IPv6 address"),
        (.noConnection(host: "o.test", port: 80), .connectFailed, "no connection to o.test:80"),
        (.writeFailed(status: UV_EPIPE.rawValue), .writeFailed, "writing the request failed: EPIPE (broken pipe)"),
        (.socketFailed(status: UV_ECONNRESET.rawValue), .connectionReset, "the connection failed: ECONNRESET (connection reset by peer)"),
        (.socketFailed(status: UV_EPIPE.rawValue), .connectionReset, "the connection failed: EPIPE (broken pipe)"),
        (.socketFailed(status: UV_ETIMEDOUT.rawValue), .writeFailed, "the connection failed: ETIMEDOUT (connection timed out)"),
        (.bytesOutsideResponse(count: 7), .malformedResponse, "the server sent 7 bytes outside of any response"),
        (.decoding(.malformed("HPE_INVALID_CONSTANT")), .malformedResponse, "HPE_INVALID_CONSTANT"),
        (.decoding(HTTP1ParseError(kind: .headersTooLarge, reason: "h")), .responseHeadTooLarge, "h"),
        (.decoding(HTTP1ParseError(kind: .bodyTooLarge, reason: "b")), .responseBodyTooLarge, "b"),
        (.decoding(HTTP1ParseError(kind: .truncatedBody, reason: "t")), .truncatedResponse, "t"),
        (.decoding(HTTP1ParseError(kind: .closedBeforeResponse, reason: "c")), .connectionClosed, "c"),
        (.decoding(HTTP1ParseError(kind: .upgradeRefused, reason: "u")), .unexpectedUpgrade, "u"),
        (.uncleanTLSEnd, .truncatedResponse,
         "the TLS connection ended without close_notify inside a body that only the end of the connection frames; it may have been cut short"),
        (.closedWithoutResponse, .connectionClosed, "the server closed the connection"),
        (.closedInsideResponse, .truncatedResponse, "the server closed the connection inside the response"),
        (.requestBody(.readAfterEnd), .bodyStreamFailed, "the body stream was read after it ended"),
        (.requestBody(.released), .bodyStreamFailed, "the body stream was already released"),
        (.requestBody(.endedEarly(bodyRead: 10, declared: 20)), .bodyStreamFailed, "the body stream ended after 10 of its declared 20 bytes"),
        (.requestBody(.longerThanDeclared(declared: 20)), .bodyStreamFailed, "the body stream has more than its declared 20 bytes"),
        (.requestBody(.unexplained), .bodyStreamFailed, "the request body failed"),
    ] as [(ExchangeError, NetworkingError.Code, String)])
    func mapsToCodeAndDetail(_ error: ExchangeError, code: NetworkingError.Code, detail: String) {
        let mapped = NetworkingError(error)
        #expect(mapped.code == code)
        #expect(mapped.detail == detail)
        #expect(mapped.failingURL == nil && mapped.response == nil && mapped.underlyingError == nil)
    }

    @Test func bodyStreamFailuresCarryTheStreamsError() {
        let factory = NetworkingError(ExchangeError.requestBody(.factoryFailed(StreamFailure())))
        #expect(factory.code == .bodyStreamFailed)
        #expect(factory.detail == "making the body stream failed: disk gone")
        #expect(factory.underlyingError is StreamFailure)
        let read = NetworkingError(ExchangeError.requestBody(.readFailed(bodyRead: 42, StreamFailure())))
        #expect(read.detail == "reading the body stream failed after 42 bytes: disk gone")
        #expect(read.underlyingError is StreamFailure)
    }
}
