import Foundation
import Synchronization
import Testing
@testable import UVNetworking

extension EndToEnd {
    /// Ranges and content codings together (RFC 9110 §14.1.2): a range of an encoded
    /// representation is a slice of encoded bytes, so a request with Range asks for no coding of
    /// the session's, and a 206 that has one anyway is delivered as received.
    @Suite(.tags(.nginx)) struct RangeCodingTests {
        private func headers(_ outcome: Outcome) -> [String: Any]? {
            let object = outcome.data.flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
            return object?["headers"] as? [String: Any]
        }

        @Test(arguments: Wire.allCases) func aRangeRequestCarriesNoAcceptEncodingOfOurs(_ wire: Wire) throws {
            let base = try wire.httpbinBaseURL()
            let harness = wire.harness()
            defer { harness.finish() }
            // httpbin's /headers ignores Range: a 200 echoing what it received.
            let ranged = harness.fetch(base + "/headers", fields: [("Range", "bytes=0-")])
            wire.expectSpoken(ranged)
            let sent = try #require(headers(ranged), "\(ranged.text ?? "no body")")
            #expect(sent["Accept-Encoding"] == nil)
            #expect(sent["Range"] as? String == "bytes=0-")
            // Without Range the session's field is there; with the caller's own, theirs is kept.
            #expect(headers(harness.fetch(base + "/headers"))?["Accept-Encoding"] as? String == "gzip, deflate, br, zstd")
            let own = harness.fetch(base + "/headers", fields: [("Range", "bytes=0-"), ("Accept-Encoding", "gzip")])
            #expect(headers(own)?["Accept-Encoding"] as? String == "gzip")
        }

        /// The session's additional fields are the caller's: a Range keeps them, Accept-Encoding
        /// among them.
        @Test func theSessionsOwnAdditionalAcceptEncodingIsKept() throws {
            let base = try Wire.http1_1.httpbinBaseURL()
            let harness = Wire.http1_1.harness { $0.httpAdditionalHeaders = [("Accept-Encoding", "gzip")] }
            defer { harness.finish() }
            let outcome = harness.fetch(base + "/headers", fields: [("Range", "bytes=0-")])
            #expect(headers(outcome)?["Accept-Encoding"] as? String == "gzip")
        }

        /// httpbin's /range serves real 206s: without a coding asked for, the slice is the bytes.
        @Test(arguments: Wire.allCases) func httpbinRangesArriveWhole(_ wire: Wire) throws {
            let base = try wire.httpbinBaseURL()
            let harness = wire.harness()
            defer { harness.finish() }
            let outcome = harness.fetch(base + "/range/26", fields: [("Range", "bytes=5-9")])
            #expect(outcome.status == 206)
            #expect(outcome.text == "fghij")
        }

        /// A server that picks a coding for a range anyway (Apache with mod_deflate, when asked
        /// with the caller's own Accept-Encoding): the 206 is delivered as received, with its
        /// Content-Encoding and Content-Range, never run through a decoder that expects the
        /// start of a stream.
        @Test func a206WithAContentEncodingIsDeliveredAsReceived() throws {
            // Random bytes: gzip leaves them about as long, so the slice lies inside the stream.
            var generator = SystemRandomNumberGenerator()
            let whole = Array(try gzipCompressed(Data((0..<4_000).map { _ in UInt8.random(in: 0...255, using: &generator) })))
            let slice = Array(whole[100..<1_100])
            let received = Mutex<[(String, String)]>([])
            let server = try ScriptedServer { connection in
                let request = try connection.readRequest()
                received.withLock { $0 = request.headers }
                try connection.write("HTTP/1.1 206 Partial Content\r\nContent-Encoding: gzip\r\n"
                                     + "Content-Range: bytes 100-1099/\(whole.count)\r\nContent-Length: \(slice.count)\r\n\r\n")
                try connection.write(slice)
                _ = connection.waitForPeerClose()
            }
            defer { server.stop() }
            let harness = ClientHarness()
            defer { harness.finish() }
            let outcome = harness.fetch("http://127.0.0.1:\(server.port)/", fields: [("Range", "bytes=100-1099"), ("Accept-Encoding", "gzip")])
            #expect(outcome.error == nil)
            #expect(outcome.status == 206)
            #expect(outcome.data.map(Array.init) == slice)
            #expect(outcome.response?.headerFields[.contentEncoding] == "gzip")
            #expect(received.withLock { $0 }.filter { $0.0.lowercased() == "accept-encoding" }.map(\.1) == ["gzip"])
        }
    }
}
