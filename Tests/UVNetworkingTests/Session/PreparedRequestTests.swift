import Foundation
import Testing
@testable import UVNetworking

/// How a streamed body is framed in the head.
@Suite(.tags(.unit)) struct PreparedRequestTests {
    private final class Empty: RequestBodyStream {
        func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int { 0 }
    }

    private func prepare(length: Int64?, fields: [(String, String)] = []) throws(NetworkingError) -> PreparedRequest {
        var request = Request(url: URL(string: "http://h/up")!, method: .post)
        request.bodyStream = StreamedBody(length: length) { Empty() }
        for (name, value) in fields { request.addValue(value, forHTTPHeaderField: name) }
        return try PreparedRequest(request, additionalFields: [])
    }

    private func head(_ prepared: PreparedRequest) -> String { String(decoding: prepared.bytes, as: UTF8.self) }

    @Test func knownLengthGivesContentLengthAndOnlyTheHead() throws {
        let prepared = try prepare(length: 1 << 33)
        #expect(head(prepared) == "POST /up HTTP/1.1\r\nHost: h\r\nContent-Length: 8589934592\r\n\r\n")
        #expect(prepared.streamedBody?.length == 1 << 33)
    }

    @Test func unknownLengthIsChunked() throws {
        let prepared = try prepare(length: nil)
        #expect(head(prepared) == "POST /up HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n")
        #expect(prepared.streamedBody != nil && prepared.streamedBody?.length == nil)
    }

    @Test func aMatchingContentLengthFieldIsKeptOnceAndAnUnknownLengthAdoptsIt() throws {
        #expect(head(try prepare(length: 5, fields: [("content-length", "5")]))
                == "POST /up HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\n")
        let adopted = try prepare(length: nil, fields: [("Content-Length", " 7 ")])
        #expect(head(adopted) == "POST /up HTTP/1.1\r\nHost: h\r\nContent-Length: 7\r\n\r\n")
        #expect(adopted.streamedBody?.length == 7)
        #expect(head(try prepare(length: nil, fields: [("Transfer-Encoding", "chunked")]))
                == "POST /up HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n")
    }

    @Test func chunkedFromTheCallerChunksAStreamOfKnownLength() throws {
        let prepared = try prepare(length: 5, fields: [("Transfer-Encoding", "chunked")])
        #expect(head(prepared) == "POST /up HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n")
        #expect(prepared.streamedBody != nil && prepared.streamedBody?.length == nil, "read to its end, in chunks")
    }

    @Test func largeInMemoryBodiesAreSentInChunksAfterTheHead() throws {
        let size = PreparedRequest.largestBodyInOneWrite
        let small = try PreparedRequest(Request(url: URL(string: "http://h/")!, method: .put, body: Data(count: size)),
                                        additionalFields: [])
        #expect(small.streamedBody == nil)
        #expect(small.bytes.count > size)
        let large = try PreparedRequest(Request(url: URL(string: "http://h/")!, method: .put, body: Data(count: size + 1)),
                                        additionalFields: [])
        #expect(head(large) == "PUT / HTTP/1.1\r\nHost: h\r\nContent-Length: \(size + 1)\r\n\r\n")
        #expect(large.streamedBody?.length == Int64(size + 1))
    }

    @Test(arguments: [[("Content-Length", "6")], [("Content-Length", "x")], [("Transfer-Encoding", "gzip")],
                      [("Transfer-Encoding", "chunked"), ("Content-Length", "5")]])
    func contradictingFramingFieldsAreRefused(fields: [(String, String)]) {
        #expect(throws: NetworkingError.self) { _ = try prepare(length: 5, fields: fields) }
        do { _ = try prepare(length: 5, fields: fields) } catch { #expect(error.code == .invalidRequestHeader) }
    }

    @Test func twoHostFieldsAreRefusedAndSayWhy() {
        var request = Request(url: URL(string: "http://h/")!)
        request.addValue("a", forHTTPHeaderField: "Host")
        request.addValue("b", forHTTPHeaderField: "host")
        do {
            _ = try PreparedRequest(request, additionalFields: [])
            Issue.record("a request with two Host fields was prepared")
        } catch {
            #expect(error.code == .invalidRequestHeader)
            #expect(error.localizedDescription.contains("Host"), "\(error.localizedDescription)")
        }
    }

    @Test func inMemoryBodiesAreUnchanged() throws {
        let request = Request(url: URL(string: "http://h/")!, method: .post, body: Data("hi".utf8))
        let prepared = try PreparedRequest(request, additionalFields: [])
        #expect(head(prepared) == "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\nhi")
        #expect(prepared.streamedBody == nil)
    }

    @Test func expectContinueHoldsAnInMemoryBodyBehindTheHead() throws {
        var request = Request(url: URL(string: "http://h/")!, method: .put, body: Data("hello".utf8))
        request.setValue("100-Continue", forHTTPHeaderField: "Expect")
        let prepared = try PreparedRequest(request, additionalFields: [])
        #expect(prepared.expectsContinue)
        #expect(head(prepared) == "PUT / HTTP/1.1\r\nHost: h\r\nExpect: 100-Continue\r\nContent-Length: 5\r\n\r\n")
        let stream = try #require(try prepared.streamedBody?.makeStream())
        var buffer = [UInt8](repeating: 0, count: 16)
        let count = try buffer.withUnsafeMutableBytes { try stream.read(into: $0) }
        #expect(Array(buffer[..<count]) == Array("hello".utf8))
        #expect(try buffer.withUnsafeMutableBytes { try stream.read(into: $0) } == 0)
    }

    @Test func expectContinueNeedsABody() throws {
        var request = Request(url: URL(string: "http://h/")!, method: .post)
        request.setValue("100-continue", forHTTPHeaderField: "Expect")
        #expect(!(try PreparedRequest(request, additionalFields: [])).expectsContinue)
        request.bodyStream = StreamedBody(length: nil) { Empty() }
        #expect(try PreparedRequest(request, additionalFields: []).expectsContinue)
        request.setValue("something-else", forHTTPHeaderField: "Expect")
        #expect(!(try PreparedRequest(request, additionalFields: [])).expectsContinue)
    }
}
