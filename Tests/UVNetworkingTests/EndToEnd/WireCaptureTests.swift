import Foundation
import Testing
@testable import UVNetworking

extension EndToEnd {
    /// `Request.wireCapture`: the bytes as they crossed the wire, per exchange, while the task's
    /// body is what it always is.
    @Suite(.tags(.nginx)) struct WireCaptureTests {
        private func captured(_ url: String, method: HTTPRequest.Method = .get, body: String? = nil, limit: Int = 1 << 20,
                              harness: ClientHarness) -> (Outcome, [WireExchange]) {
            var request = ClientHarness.request(url, method: method, body: body)
            let capture = WireCapture(limit: limit)
            request.wireCapture = capture
            let outcome = harness.fetch(request)
            return (outcome, capture.exchanges)
        }

        @Test(arguments: Wire.allCases) func gzipBodyStaysCompressedWhileTheTaskGetsItDecoded(_ wire: Wire) throws {
            let base = try wire.httpbinBaseURL()
            let harness = wire.harness()
            let (outcome, exchanges) = captured(base + "/gzip", harness: harness)
            // Checked before gzip runs below: the first Foundation `Process` of a test process
            // starts libdispatch's event manager (an epoll, an eventfd and a timerfd, kept for
            // good), which the descriptor check would take for a leak of the session's.
            harness.finish()
            #expect(outcome.status == 200)
            let exchange = try #require(exchanges.first)
            #expect(exchanges.count == 1)
            #expect(exchange.url.absoluteString == base + "/gzip")
            #expect(exchange.remoteAddress == "127.0.0.1")
            #expect(exchange.isComplete && !exchange.isResponseTruncated && !exchange.isRequestTruncated)
            let request = try CapturedMessage(exchange.request)
            #expect(request.head.hasPrefix("GET /gzip HTTP/1.1\r\n"))
            #expect(request.field("Accept-Encoding") == "gzip, deflate, br, zstd")
            let response = try CapturedMessage(exchange.response)
            #expect(response.status == 200)
            #expect(response.field("Content-Encoding") == "gzip")
            // The body as sent: a gzip member, whose inflated bytes are what the task received.
            #expect(response.body.prefix(2) == Data([0x1f, 0x8b]))
            #expect(try gunzipped(response.body) == outcome.data)
            #expect(response.field("Content-Length").flatMap(Int.init) == response.body.count)
        }

        @Test func chunkedBodyStaysChunked() throws {
            let nginx = try TestServers.nginx()
            let harness = ClientHarness()
            defer { harness.finish() }
            let (outcome, exchanges) = captured(nginx.baseURL + "/chunked", harness: harness)
            #expect(outcome.text == NginxServer.helloBody)
            let response = try CapturedMessage(try #require(exchanges.first).response)
            #expect(response.field("Transfer-Encoding") == "chunked")
            #expect(response.body != Data(NginxServer.helloBody.utf8))
            #expect(try dechunked(response.body) == Data(NginxServer.helloBody.utf8))
        }

        @Test func httpbinStreamIsChunkedInTheCapture() throws {
            let httpbin = try TestServers.httpbin()
            let harness = ClientHarness()
            defer { harness.finish() }
            let (outcome, exchanges) = captured(httpbin.baseURL + "/stream/3", harness: harness)
            #expect(outcome.status == 200)
            let response = try CapturedMessage(try #require(exchanges.first).response)
            #expect(response.field("Transfer-Encoding") == "chunked")
            #expect(try dechunked(response.body) == outcome.data)
        }

        @Test func eachRedirectIsAnExchangeOfItsOwn() throws {
            let httpbin = try TestServers.httpbin()
            let harness = ClientHarness()
            defer { harness.finish() }
            let (outcome, exchanges) = captured(httpbin.baseURL + "/redirect/2", harness: harness)
            #expect(outcome.status == 200)
            #expect(exchanges.count == 3)
            let statuses = try exchanges.map { try CapturedMessage($0.response).status }
            #expect(statuses == [302, 302, 200])
            #expect(exchanges.first?.url.path == "/redirect/2")
            #expect(exchanges.last?.url.path == "/get")
            for exchange in exchanges {
                let request = try CapturedMessage(exchange.request)
                #expect(request.head.hasPrefix("GET \(exchange.url.path) HTTP/1.1\r\n"), "\(request.head)")
                #expect(exchange.isComplete)
            }
            #expect(zip(exchanges, exchanges.dropFirst()).allSatisfy { $0.startDate <= $1.startDate })
        }

        @Test func tlsIsCapturedAsPlaintext() throws {
            let nginx = try TestServers.nginxTLS()
            let harness = tlsHarness()
            defer { harness.finish() }
            let (outcome, exchanges) = captured(nginx.url(.valid), harness: harness)
            #expect(outcome.status == 200)
            let exchange = try #require(exchanges.first)
            #expect(try CapturedMessage(exchange.request).head.hasPrefix("GET /hello HTTP/1.1\r\n"))
            let response = try CapturedMessage(exchange.response)
            #expect(response.head.hasPrefix("HTTP/1.1 200 "))
            #expect(response.body == Data(NginxTLSServer.helloBody.utf8))
        }

        @Test func headResponseIsItsHeadAlone() throws {
            let nginx = try TestServers.nginx()
            let harness = ClientHarness()
            defer { harness.finish() }
            let (outcome, exchanges) = captured(nginx.baseURL + "/hello", method: .head, harness: harness)
            #expect(outcome.status == 200)
            let exchange = try #require(exchanges.first)
            #expect(try CapturedMessage(exchange.request).head.hasPrefix("HEAD /hello HTTP/1.1\r\n"))
            let response = try CapturedMessage(exchange.response)
            #expect(response.field("Content-Length") == "12")
            #expect(response.body.isEmpty)
            #expect(exchange.isComplete)
        }

        @Test func requestBodyIsCapturedWithItsHead() throws {
            let nginx = try TestServers.nginx()
            let harness = ClientHarness()
            defer { harness.finish() }
            let (_, exchanges) = captured(nginx.baseURL + "/hello", method: .post, body: "name=value", harness: harness)
            let request = try CapturedMessage(try #require(exchanges.first).request)
            #expect(request.head.hasPrefix("POST /hello HTTP/1.1\r\n"))
            #expect(request.field("Content-Length") == "10")
            #expect(request.body == Data("name=value".utf8))
        }

        /// A body past 64 KiB follows its head in chunks (written apart): all of it is captured.
        @Test func aBodySentInChunksIsCapturedWhole() throws {
            let httpbin = try TestServers.httpbin()
            let harness = ClientHarness()
            defer { harness.finish() }
            let body = String(repeating: "0123456789abcdef", count: 10_000)
            // httpbin reads the whole body before it answers (nginx's `return` would answer first).
            let (outcome, exchanges) = captured(httpbin.baseURL + "/post", method: .post, body: body, harness: harness)
            #expect(outcome.status == 200)
            let request = try CapturedMessage(try #require(exchanges.first).request)
            #expect(request.field("Content-Length") == "160000")
            #expect(request.body == Data(body.utf8))
        }

        @Test func pastItsLimitTheCaptureIsTruncatedAndTheTaskIsNot() throws {
            let nginx = try TestServers.nginx()
            let harness = ClientHarness()
            defer { harness.finish() }
            let (outcome, exchanges) = captured(nginx.baseURL + "/large", limit: 1000, harness: harness)
            #expect(outcome.data?.count == NginxServer.largeSize)
            let exchange = try #require(exchanges.first)
            #expect(exchange.response.count == 1000)
            #expect(exchange.isResponseTruncated)
            #expect(!exchange.isRequestTruncated)
            #expect(exchange.isComplete)
            let response = try CapturedMessage(exchange.response)
            #expect(Array(response.body) == Array(NginxServer.largeBody(count: response.body.count)))
        }

        @Test func keepAliveRequestsEachCaptureOnlyTheirOwnResponse() throws {
            let nginx = try TestServers.nginx()
            let harness = ClientHarness()
            defer { harness.finish() }
            for _ in 0..<3 {
                let (outcome, exchanges) = captured(nginx.baseURL + "/hello", harness: harness)
                #expect(outcome.text == NginxServer.helloBody)
                let response = try CapturedMessage(try #require(exchanges.first).response)
                #expect(exchanges.count == 1)
                #expect(response.body == Data(NginxServer.helloBody.utf8))
            }
        }

        @Test func aRefusedConnectionRecordsNoExchange() throws {
            let harness = ClientHarness()
            defer { harness.finish() }
            let port = try TestServers.freeLoopbackPort()
            let (outcome, exchanges) = captured("http://127.0.0.1:\(port)/", harness: harness)
            #expect(outcome.error != nil)
            #expect(exchanges.isEmpty)
        }
    }
}
